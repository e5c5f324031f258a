"""The report: its JSON contract, Markdown, terminal and HTML views, charts and the trail notebook."""
