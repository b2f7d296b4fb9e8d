"""The viewer's web app (Starlette, Jinja2 templates): GET pages only, nothing written anywhere.

Model output is untrusted: every value reaches the page through Jinja2's autoescaping, and
the Content-Security-Policy allows no script at all (the pages need none: filters are a GET
form), so an answer that holds ``<script>`` is shown as text and could not run even if some
markup slipped through. Only Host headers naming the loopback address are served (no DNS
rebinding), and images come only from the runs' own item references.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from medlens.core.errors import MedlensError
from medlens.core.items import ItemError
from medlens.core.terminal import terminal_safe
from medlens.report.viewer.catalog import (
    OUTCOMES,
    Group,
    Query,
    Row,
    matching,
    page_of,
)
from medlens.report.viewer.links import AXIS_PREFIX, item_path
from medlens.report.viewer.pictures import browser_image, sent_image

PER_PAGE = (25, 50, 100, 200)
SNIPPET = 160
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _shown(value: Any) -> Any:
    """Every text a page shows passes the one sanitiser: a bidi override in an id or an answer is
    shown as ``\u202e`` instead of turning the heading around (HTML escaping leaves it)."""
    return terminal_safe(value) if type(value) is str else value


TEMPLATES = Environment(
    loader=PackageLoader("medlens.report.viewer", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    finalize=_shown,
)


def viewer_app(groups: Sequence[Group]) -> Starlette:
    """The app over `groups` (see :func:`catalog.load_catalog`)."""
    pages = _Pages(tuple(groups))
    routes = [
        Route("/", pages.list_page),
        Route("/item/{item_id:path}", pages.item_page),
        Route("/image/{group:int}/{run:int}/{index:int}/{item_id:path}", pages.image),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
    ]
    hosts = Middleware(TrustedHostMiddleware, allowed_hosts=["127.0.0.1", "localhost"])
    return Starlette(routes=routes, middleware=[hosts])


def _html(name: str, status: int = 200, **values: Any) -> HTMLResponse:
    body = TEMPLATES.get_template(name).render(**values)
    return HTMLResponse(body, status_code=status, headers=SECURITY_HEADERS)


def _number(text: str | None, default: int) -> int:
    try:
        return int(text) if text else default
    except ValueError:
        return default


def read_query(params: Mapping[str, str], group: Group) -> Query:
    """The list filters in `params` (unknown values simply match nothing)."""
    per_page = _number(params.get("per"), 50)
    return Query(
        axes={
            k[len(AXIS_PREFIX) :]: v for k, v in params.items() if k.startswith(AXIS_PREFIX) and v
        },
        kind=params.get("kind", ""),
        outcome=params.get("outcome", ""),
        of=params.get("of", ""),
        text=params.get("q", ""),
        page=_number(params.get("page"), 1),
        per_page=per_page if per_page in PER_PAGE else 50,
    )


def query_string(query: Query, group_index: int, **changes: Any) -> str:
    """The list's query string for `query` with `changes` (e.g. another page)."""
    values: dict[str, Any] = {
        "bench": group_index or "", "kind": query.kind, "outcome": query.outcome, "of": query.of,
        "q": query.text, "per": query.per_page if query.per_page != 50 else "", "page": query.page,
    }  # fmt: skip
    values.update(changes)
    pairs = [(AXIS_PREFIX + a, v) for a, v in query.axes.items()]
    pairs += [
        (k, str(v)) for k, v in values.items() if v not in ("", None) and (k, v) != ("page", 1)
    ]
    return urlencode(pairs)


class _Pages:
    def __init__(self, groups: tuple[Group, ...]) -> None:
        self.groups = groups

    def _group(self, request: Request) -> tuple[int, Group] | None:
        index = _number(request.query_params.get("bench"), 0)
        return (index, self.groups[index]) if 0 <= index < len(self.groups) else None

    def list_page(self, request: Request) -> HTMLResponse:
        found = self._group(request)
        if found is None:
            return _html("error.html", 404, message="no such benchmark in this viewer")
        index, group = found
        query = read_query(request.query_params, group)
        rows = matching(group, query)
        shown, page, pages = page_of(rows, query.page, query.per_page)
        first = (page - 1) * query.per_page
        return _html(
            "list.html",
            groups=self.groups, group=group, group_index=index, query=query, outcomes=OUTCOMES,
            rows=[_list_row(row, group, index, query) for row in shown], total=len(rows),
            first=first + 1 if shown else 0, last=first + len(shown), page=page, pages=pages,
            per_pages=PER_PAGE, link=lambda **changes: "?" + query_string(query, index, **changes),
        )  # fmt: skip

    def item_page(self, request: Request) -> HTMLResponse:
        item_id = request.path_params["item_id"]
        found = self._group(request)
        if "bench" not in request.query_params:  # a link from a report: the first group with it
            found = next(
                ((i, g) for i, g in enumerate(self.groups) if item_id in g.positions), found
            )
        if found is None or item_id not in found[1].positions:
            return _html("error.html", 404, message=f"no item {item_id!r} in this viewer")
        index, group = found
        query = read_query(request.query_params, group)
        row = group.rows[group.positions[item_id]]
        return _html(
            "item.html",
            group=group, group_index=index, row=row, item=row.item,
            columns=[_run_column(group, i, row, index) for i in range(len(group.runs))],
            images=_image_urls(index, plain_run(group), row), neighbours=_neighbours(group, query, row, index),
            back="/?" + query_string(query, index),
        )  # fmt: skip

    def image(self, request: Request) -> Response:
        params = request.path_params
        try:
            run = self.groups[params["group"]].runs[params["run"]]
            data = sent_image(run, params["item_id"], params["index"])
            if data is None:
                return Response("this run sent no image here (probe)", 404, media_type="text/plain")
            body, media = browser_image(data, request.query_params.get("size") == "thumb")
        except (IndexError, MedlensError, ItemError) as exc:
            message = str(exc) if not isinstance(exc, IndexError) else "no such run"
            return Response(message, 404, media_type="text/plain")
        headers = {**SECURITY_HEADERS, "Cache-Control": "max-age=3600"}
        return Response(body, media_type=media, headers=headers)


def _image_urls(group_index: int, run: int, row: Row, thumb: bool = False) -> list[str]:
    suffix = "?size=thumb" if thumb else ""
    return [
        f"/image/{group_index}/{run}/{i}{item_path(row.id)[len('/item') :]}{suffix}"
        for i in range(len(row.item.images))
    ]


def _list_row(row: Row, group: Group, group_index: int, query: Query) -> dict[str, Any]:
    answers = []
    for run, result in zip(group.runs, row.outcomes, strict=True):
        record = run.records.get(row.id) or {}
        extraction = record.get("extraction") or {}
        answers.append({
            "outcome": result, "answer": extraction.get("answer"),
            "output": _snippet(record.get("output") or _error_text(record)),
        })  # fmt: skip
    thumbs = _image_urls(group_index, plain_run(group), row, thumb=True)
    return {
        "id": row.id, "href": item_path(row.id) + "?" + query_string(query, group_index),
        "question": _snippet(row.item.question), "gold": _gold(row), "kind": row.item.kind,
        "thumb": thumbs[0] if thumbs else None, "more_images": len(thumbs) - 1, "answers": answers,
    }  # fmt: skip


def _run_column(group: Group, run_index: int, row: Row, group_index: int) -> dict[str, Any]:
    run = group.runs[run_index]
    record = run.records.get(row.id) or {}
    return {
        "name": run.name, "model": run.model, "probe": run.probe, "outcome": row.outcomes[run_index],
        "output": record.get("output"), "error": _error_text(record),
        "extraction": record.get("extraction") or {}, "score": record.get("score"),
        "scores": record.get("scores") or {},
        "verdicts": {name: v[row.id] for name, v in run.verdicts.items() if row.id in v},
        "images": _image_urls(group_index, run_index, row) if run.probe else [],
    }  # fmt: skip


def plain_run(group: Group) -> int:
    """The run whose images stand for the item's own: the first without a probe."""
    return next((i for i, run in enumerate(group.runs) if not run.probe), 0)


def _neighbours(group: Group, query: Query, row: Row, group_index: int) -> dict[str, str]:
    """Links to the previous and next item of the list the page was opened from."""
    rows = matching(group, query)
    ids = [r.id for r in rows]
    if row.id not in ids:
        return {}
    at, links = ids.index(row.id), {}
    suffix = "?" + query_string(query, group_index)
    if at > 0:
        links["previous"] = item_path(ids[at - 1]) + suffix
    if at + 1 < len(ids):
        links["next"] = item_path(ids[at + 1]) + suffix
    return links


def _gold(row: Row) -> str:
    answer = row.item.answer
    if answer is None:
        return "–"
    if isinstance(answer, tuple):
        return "; ".join("[" + ", ".join(f"{v:g}" for v in box) + "]" for box in answer)
    return str(answer)


def _error_text(record: Mapping[str, Any]) -> str:
    error = record.get("error")
    return f"[{error.get('type')} error] {error.get('message', '')}" if error else ""


def _snippet(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= SNIPPET else text[: SNIPPET - 1] + "…"
