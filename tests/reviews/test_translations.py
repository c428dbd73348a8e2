"""Japanese ships complete for the workspace, and the compiled catalogue matches its source."""

from __future__ import annotations

import ast
import gettext
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JA = ROOT / "locale" / "ja" / "LC_MESSAGES"
WORKSPACE = ("reviewqueue/reviews/", "templates/reviews/", "templates/base.html",
             "templates/registration/")


def entries() -> list[tuple[list[str], str, str, str]]:
    """(references, msgid, first msgstr, msgctxt or "") of each entry of the Japanese .po
    file."""
    out = []
    for block in (JA / "django.po").read_text(encoding="utf-8").split("\n\n")[1:]:
        refs = [r for line in block.splitlines() if line.startswith("#: ")
                for r in line[3:].split()]
        fields: dict[str, str] = {}
        current = None
        for line in block.splitlines():
            match = re.match(r'^(msgctxt|msgid|msgid_plural|msgstr(?:\[0\])?|msgstr\[\d+\]) '
                             r'(".*")$', line)
            if match:
                current = match.group(1)
                fields[current] = ast.literal_eval(match.group(2))
            elif line.startswith('"') and current:
                fields[current] += ast.literal_eval(line)
        if "msgid" in fields:
            out.append((refs, fields["msgid"], fields.get("msgstr", fields.get("msgstr[0]", "")),
                        fields.get("msgctxt", "")))
    return out


def test_every_workspace_string_has_a_japanese_translation() -> None:
    missing = [msgid for refs, msgid, msgstr, _ in entries()
               if any(r.startswith(WORKSPACE) for r in refs) and not msgstr]
    assert missing == []


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_compiled_catalogue_is_up_to_date(lang: str) -> None:
    path = ROOT / "locale" / lang / "LC_MESSAGES" / "django.mo"
    assert path.exists(), "run manage.py compilemessages"
    if lang != "ja":
        return
    with path.open("rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    stale = [msgid for _, msgid, msgstr, context in entries()
             if msgstr and (compiled.pgettext(context, msgid) if context
                            else compiled.gettext(msgid)) != msgstr]
    assert stale == []


def test_every_translation_uses_the_placeholders_of_its_message() -> None:
    """A translation with another message's placeholders shows them raw (or fails) on the page."""
    def names(text: str) -> set[str]:
        return set(re.findall(r"%\((\w+)\)[sd]|\{\{ *(\w+) *\}\}", text)) if text else set()

    wrong = [msgid for _, msgid, msgstr, _ in entries()
             if msgstr and names(msgid) != names(msgstr)]
    assert wrong == []


def test_how_long_an_item_waited_reads_naturally_in_japanese() -> None:
    """Django joins its units with gettext(", "): Japanese writes "3日 22時間", no comma."""
    import datetime as dt

    from django.utils import timezone, translation

    from reviewqueue.reviews.templatetags.review_tags import held_for

    since = timezone.now() - dt.timedelta(days=3, hours=22, minutes=5)
    with translation.override("ja"):
        assert held_for(since) == "3日 22時間"
    with translation.override("en"):
        assert held_for(since) == "3\xa0days, 22\xa0hours"


def test_an_item_held_for_seconds_says_less_than_a_minute() -> None:
    import datetime as dt

    from django.utils import timezone, translation

    from reviewqueue.reviews.templatetags.review_tags import held_for

    since = timezone.now() - dt.timedelta(seconds=20)
    with translation.override("en"):
        assert held_for(since) == "less than a minute"
    with translation.override("ja"):
        assert held_for(since) == "1分未満"


def test_every_message_the_python_code_asks_for_is_in_the_catalogue() -> None:
    """A message asked for with a literal (gettext, _, pgettext, ...) is in the Japanese .po.
    makemessages (xgettext) does not read inside f-strings: a message asked for only there is
    dropped at the next run, and the page shows it in English (the item page's "no citation",
    "The answer is empty." and a conflict card's "Revision" went so)."""
    names = {"_", "gettext", "gettext_lazy", "gettext_noop", "pgettext", "pgettext_lazy",
             "ngettext", "ngettext_lazy"}
    known = {(context, msgid) for _, msgid, _, context in entries()}
    missing = []
    for path in sorted((ROOT / "reviewqueue").rglob("*.py")):
        if "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in names):
                continue
            literal = [a.value for a in node.args if isinstance(a, ast.Constant)
                       and isinstance(a.value, str)]
            wanted = 2 if node.func.id.startswith("pgettext") else 1
            if len(literal) < wanted or not all(isinstance(a, ast.Constant)
                                                for a in node.args[:wanted]):
                continue
            key = (literal[0], literal[1]) if wanted == 2 else ("", literal[0])
            if key not in known:
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno} {key[1]!r}")
    assert missing == []
