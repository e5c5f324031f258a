"""The digest's HTML page, a Jinja2 template rendered with autoescape (values from the data are
text, never markup)."""

DIGEST_HTML = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{ title }}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2rem; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { border-bottom: 1px solid #ddd; padding: .35rem .7rem; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.failed { color: #b00020; }
.muted { color: #777; }
</style>
</head>
<body>
<h1>{{ title }}</h1>
<p>{{ headline }}</p>
{% if rows %}
<table>
<thead><tr><th>metric</th><th>segment</th><th>change</th><th>score</th><th>verdict</th>
<th>top cause</th><th>report</th></tr></thead>
<tbody>
{% for r in rows %}
<tr>
<td>{{ r.metric }}</td><td>{{ r.segment }}</td>
<td class="num">{{ r.change }}</td><td class="num">{{ r.score }}</td>
<td{% if r.verdict == "failed" %} class="failed"{% endif %}>{{ r.verdict }}</td><td>{{ r.cause }}</td>
<td>{% if r.link %}<a href="{{ r.link }}">report</a>{% endif %}</td>
</tr>
{% endfor %}
</tbody>
</table>
{% else %}
<p>Nothing moved abnormally.</p>
{% endif %}
<h2>Everything scanned</h2>
<table>
<thead><tr><th>metric</th><th>segment</th><th>current</th><th>baseline</th><th>change</th><th>score</th><th>flagged</th></tr></thead>
<tbody>
{% for s in digest.scanned %}
<tr>
<td>{{ s.metric }}</td><td>{{ seg(s.segment) }}</td>
{% if s.error %}<td colspan="5" class="failed">{{ s.error }}</td>
{% else %}<td class="num">{{ num(s.current) }}</td><td class="num">{{ num(s.baseline) }}</td>
<td class="num">{{ pct(s.change_pct) }}</td><td class="num">{{ z(s.score) }}</td>
<td>{{ "yes" if s.flagged else "" }}</td>{% endif %}
</tr>
{% endfor %}
</tbody>
</table>
{% if digest.notifications %}
<h2>Notifications</h2>
<ul>
{% for n in digest.notifications %}
<li>{{ n.target }}: {% if n.ok %}sent{% else %}<span class="failed">failed ({{ n.error }})</span>{% endif %}
<span class="muted">({{ n.attempts }} attempt{{ "" if n.attempts == 1 else "s" }})</span></li>
{% endfor %}
</ul>
{% endif %}
</body>
</html>
"""
