# The sandbox image: a Jupyter kernel with the analysis stack and `investigator.analysis` preloadable.
# Real users build it with the default base; CI here builds its own Debian base (.ci/docker-setup.sh).
ARG BASE_IMAGE=python:3.11-slim-bookworm
FROM ${BASE_IMAGE}

ENV VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    MPLBACKEND=Agg

# Dependencies first, so changing the analysis code does not reinstall them.
RUN python3 -m venv /opt/venv \
 && pip install \
      "ipykernel>=6.29" "pandas>=2.2" "numpy>=1.26" "scipy>=1.11" "statsmodels>=0.14" \
      "matplotlib>=3.8" "duckdb>=1.0" "pyarrow>=15" "pydantic>=2.7" "ibis-framework[duckdb]>=10" \
 && python -c "import matplotlib.pyplot, pandas, scipy, statsmodels, duckdb, pyarrow, ibis, ipykernel"

# The analysis library only (the agent stays outside), importable as `investigator.analysis`.
COPY investigator/analysis /opt/investigator/investigator/analysis
RUN touch /opt/investigator/investigator/__init__.py \
 && python -m compileall -q /opt/investigator \
 && echo 'sandbox:x:1000:1000:sandbox:/home/sandbox:/usr/sbin/nologin' >> /etc/passwd \
 && echo 'sandbox:x:1000:' >> /etc/group \
 && mkdir -p /workspace /data /run/kernel /home/sandbox \
 && chown sandbox:sandbox /workspace /home/sandbox

ENV PYTHONPATH=/opt/investigator \
    HOME=/home/sandbox \
    MPLCONFIGDIR=/tmp/matplotlib \
    IPYTHONDIR=/tmp/ipython
USER 1000:1000
WORKDIR /workspace
# The kernel binds its ZMQ sockets as IPC files in /run/kernel (a mounted folder the host client
# connects to), so the container needs no network at all.
CMD ["python", "-m", "ipykernel_launcher", "-f", "/run/kernel/connection.json", "--HistoryManager.enabled=False"]
