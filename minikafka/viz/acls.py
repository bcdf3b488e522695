"""Who may do what: the StandardAuthorizer's answers as a principal × resource matrix.

`acl_matrix()` asks the cluster's authorizer (minikafka.core.acl) every question in the
grid and keeps the rule that decided each one, so the picture shows why as well as
what: a super user, the ALLOW that matched (and whether the operation was only implied,
as READ implies DESCRIBE), a DENY that won, or no ACL at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import graphviz

from minikafka.core.acl import (
    DENIED,
    NO_ACL_EVERYONE,
    SUPER_USER,
    AclBinding,
    AclOperation,
    Authorizer,
    ResourceType,
)

from .html import bold, esc, font, td
from .palette import BLACK, BLUISH_GREEN, FONT, GREY, LIGHT_GREY, VERMILLION, WHITE

# The operations a lesson asks about for each kind of resource, in display order.
DEFAULT_OPERATIONS: dict[str, tuple[str, ...]] = {
    "TOPIC": ("READ", "WRITE", "DESCRIBE"),
    "GROUP": ("READ", "DESCRIBE"),
    "CLUSTER": ("CREATE", "ALTER", "DESCRIBE"),
    "TRANSACTIONAL_ID": ("WRITE", "DESCRIBE"),
}
# Cell marks: colour is never the only signal (palette.py).
ALLOW_MARK, DENY_MARK, NONE_MARK = "✔", "✖", "·"


def _pattern(acl: AclBinding) -> str:
    return f"{acl.pattern_type.name.lower()} {acl.resource_name}"


def _why(operation: str, rule: str, acl: AclBinding | None) -> str:
    if rule == SUPER_USER:
        return "super user"
    if rule == NO_ACL_EVERYONE:
        return "no ACL: everyone"
    if acl is None:
        return "no ACL"
    what = "deny" if rule == DENIED else "allow"
    implied = acl.operation.name not in (operation, "ALL")
    return f"{what} {_pattern(acl)}" + (f" (via {acl.operation.name})" if implied else "")


def acl_matrix(authorizer: Authorizer, principals: Sequence[str],
               resources: Iterable[tuple[str, str]], *, host: str = "127.0.0.1",
               operations: Mapping[str, Sequence[str]] | None = None) -> dict[str, Any]:
    """Every principal's answer for every resource and operation, as plain data::

        {"principals": [...], "resources": [{"type": "TOPIC", "name": "orders-eu"}],
         "super_users": [...], "acls": [str(binding)],
         "cells": {principal: [[{"operation", "allowed", "rule", "why"}] per resource]}}

    `resources` are (resource type name, resource name) pairs, e.g. ("GROUP", "team-eu").
    """
    ops = {**DEFAULT_OPERATIONS, **(operations or {})}
    resources = [{"type": kind.upper(), "name": name} for kind, name in resources]
    cells: dict[str, list[list[dict[str, Any]]]] = {}
    for principal in principals:
        row = []
        for r in resources:
            answers = []
            for op in ops[r["type"]]:
                d = authorizer.decide(principal, host, AclOperation[op], ResourceType[r["type"]],
                                      r["name"])
                answers.append({"operation": op, "allowed": d.allowed, "rule": d.rule,
                                "why": _why(op, d.rule, d.acl)})
            row.append(answers)
        cells[principal] = row
    return {"principals": list(principals), "resources": resources,
            "super_users": sorted(authorizer.super_users),
            "everyone_if_no_acl": authorizer.allow_everyone_if_no_acl_found,
            "acls": sorted(str(a) for a in authorizer.acls), "cells": cells}


def _cell(answers: list[dict[str, Any]]) -> str:
    if all(a["rule"] == SUPER_USER for a in answers):
        return (f'{font(ALLOW_MARK, color=BLUISH_GREEN)} {bold("everything")}'
                f'<BR ALIGN="LEFT"/>{font("super user: no ACL is read", point=9)}'
                '<BR ALIGN="LEFT"/>')
    lines = []
    for a in answers:
        if a["allowed"]:
            mark, colour = ALLOW_MARK, BLUISH_GREEN
        elif a["rule"] == DENIED:
            mark, colour = DENY_MARK, VERMILLION
        else:
            mark, colour = NONE_MARK, GREY
        word = esc(a["operation"])
        if a["allowed"] or a["rule"] == DENIED:
            word = bold(word)
        lines.append(f'{font(mark, color=colour)} {word}<BR ALIGN="LEFT"/>'
                     + font(f'   {esc(a["why"])}', point=9))
    return '<BR ALIGN="LEFT"/>'.join(lines) + '<BR ALIGN="LEFT"/>'


def acl_matrix_view(matrix: Mapping[str, Any]) -> graphviz.Digraph:
    """One table: a row per resource, a column per principal; each cell lists the
    operations with ✔ allowed, ✖ denied by a DENY, · not allowed (no ACL), each with the
    rule that decided it."""
    principals = matrix["principals"]
    head = [td("resource", bold=True, point=10, fill=LIGHT_GREY)]
    head += [td(esc(p) + ("<BR/>(super user)" if p in matrix["super_users"] else ""),
                raw=True, bold=True, point=10, fill=LIGHT_GREY) for p in principals]
    rows = ["<TR>" + "".join(head) + "</TR>"]
    for i, r in enumerate(matrix["resources"]):
        row = [td(f"{r['type'].lower()}<BR ALIGN=\"LEFT\"/>{bold(esc(r['name']))}"
                  "<BR ALIGN=\"LEFT\"/>", raw=True, point=10,
                  align="LEFT")]
        for p in principals:
            answers = matrix["cells"][p][i]
            any_allowed = any(a["allowed"] for a in answers)
            row.append(td(_cell(answers), raw=True, point=10, align="LEFT",
                          fill=WHITE if any_allowed else LIGHT_GREY))
        rows.append("<TR>" + "".join(row) + "</TR>")
    legend = [f"{ALLOW_MARK} allowed   {DENY_MARK} denied by a DENY ACL   {NONE_MARK} not "
              "allowed: no ACL allows it",
              f"super.users={';'.join(matrix['super_users']) or '-'}   "
              f"allow.everyone.if.no.acl.found={str(matrix['everyone_if_no_acl']).lower()}"]
    for line in legend:
        rows.append("<TR>" + td(line, colspan=len(principals) + 1, border=0, point=9,
                                align="LEFT", italic=True) + "</TR>")
    g = graphviz.Digraph("acl_matrix", graph_attr={
        "fontname": FONT, "label": f"who may do what · {len(matrix['acls'])} ACLs",
        "labelloc": "t", "fontsize": "12"},
        node_attr={"shape": "plain", "fontname": FONT, "fontcolor": BLACK})
    g.node("matrix", '<<TABLE BORDER="1" CELLBORDER="1" CELLSPACING="0" CELLPADDING="4" '
                     'COLOR="' + GREY + '">' + "".join(rows) + "</TABLE>>")
    return g
