"""`medlens view`: a local, read-only web viewer over runs and boards' folders of runs.

Owns the catalog of what is shown (runs grouped by benchmark, one row per item with each run's
outcome), the item filters and pages, the images as the model saw them, and the Starlette app
with its Jinja2 templates; ``cli/view.py`` starts it with uvicorn on 127.0.0.1.

It sits in the report stage (``report/viewer/``), not in a package of its own above ``report``,
because it is one more way of rendering finished runs, as the HTML report and board are: it reads
runs through ``runs`` and judge verdicts through ``judges`` and imports nothing above ``report``,
while the HTML report and board link to its item pages through :mod:`.links` (no web stack
imported). Starlette, uvicorn and Jinja2 are imported only by :mod:`.app` and :mod:`.serve`, so
no other command pays for them.
"""
