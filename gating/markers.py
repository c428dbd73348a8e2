"""Citation markers in free answer text, and the sentences that carry them.

A marker is a bracketed list of ids: ``[d1]``, ``[d1, d2]`` or ``[d1][d2]``. Ids use the
characters ``A-Z a-z 0-9 _ . : -``, and are separated by a comma or a semicolon (``[d1; d2]``),
by the Japanese comma U+3001 (``[d1、d2]``), or by a full-width comma or semicolon (U+FF0C,
U+FF1B). Full-width brackets (U+FF3B, U+FF3D), as Japanese text writes them, make a marker
too, even paired with an ASCII one; a full-width bracket opens no link, so one followed by
``(x)`` is a marker and text. A Markdown footnote reference (``[^d1]``), which a renderer
shows as a superscript citation, is a marker too; so is a footnote definition at a line start
(``[^d1]: text``), as a link reference definition (``[d1]: url``) is: the gate holds rather
than passes. A marker written with Markdown's backslash escapes
(``[pricing\\_faq]``, ``\\[d9\\]``) is read as CommonMark shows it. A bracket followed
directly by ``(`` and a link destination is a Markdown link (``[docs](https://...)``), not a
citation, and is ignored.
Brackets inside Markdown code are not markers either, nor are those inside a link's
destination or title or inside an HTML comment: fenced code blocks (`````` ``` `````` or
``~~~``), code spans (```plans[0]```), ``(...)`` after a link text, autolinks
(``<https://...>``) and comments (``<!-- [d1] -->``) are blanked out before markers are looked
for. A comment inside a marker hides nothing of it: ``[d<!-- -->1]`` shows ``[d1]``. A
character reference shows the character it names, so ``&#91;d9&#93;`` is the marker ``[d9]``,
and a bracket so written, or escaped (``\\[d9](x)``), opens no link: the reader sees ``[d9]``.
"""

from __future__ import annotations

import html.entities
import re
import string
from collections.abc import Iterator

from gating.model import Sentence

_ID = r"[A-Za-z0-9_.:\-]+"
# What a marker can name: an evidence id outside it is cited by claims alone.
CITE_ID = re.compile(_ID)
# Inside a marker, CommonMark shows a backslash-escaped character without its backslash: a
# reader sees `[pricing\_faq]` as [pricing_faq], and `[d9\]` or `[d1\, d2]` as markers too.
# A closing bracket so escaped ends no link text: `[d9\](x)` shows the marker and "(x)".
_MARKER_ID = r"(?:[A-Za-z0-9_.:\-]|\\[_.:\-])+"
# A marker opens with "[" or a full-width bracket (U+FF3B), then a footnote's "^" right after it
# ("[^d9]", escaped or not). Ids are separated by "," or ";" (escaped or not), or by the
# Japanese, full-width comma or full-width semicolon (U+3001, U+FF0C, U+FF1B), which
# CommonMark cannot escape. A marker closes with "]" (escaped, or followed by no "(": that is a
# link) or a full-width bracket (U+FF3D), which opens and closes no link: "(x)" after it is
# text.
_OPEN = r"[\[\uff3b]"
_CARET = r"(?:\\?\^)?"
_SEPARATOR = r"(?:[,;\u3001\uff0c\uff1b]|\\[,;])"
_CLOSE = r"(?:\](?!\()|\\\]|\\?\uff3d)"
_MARKER = rf"{_CARET}\s*({_MARKER_ID}(?:\s*{_SEPARATOR}\s*{_MARKER_ID})*)\s*{_CLOSE}"
MARKER_RE = re.compile(_OPEN + _MARKER)
# The same for a text with no full-width opening bracket, the usual one: a pattern that starts
# with one literal character is looked for faster than one that starts with a choice of two.
_ASCII_MARKER_RE = re.compile(r"\[" + _MARKER)
# An HTML comment shows nothing, so one inside a marker leaves the marker the reader sees:
# `[d<!-- -->1]` shows [d1]. Comments are blanked with this character in the text markers are
# read from, and where it occurs, markers are read with it allowed (and dropped) between any
# two of their characters. A NUL of the text itself is read as CommonMark shows it, U+FFFD.
_HIDDEN = "\x00"
# Possessive: a run of them is never shared out between two parts of the pattern (which,
# tried again at every split, made a long comment after an opening bracket quadratic).
_HIDDEN_ID = r"(?:(?:[A-Za-z0-9_.:\-]|\\[_.:\-])\x00*+)++"
_HIDDEN_MARKER_RE = re.compile(
    rf"{_OPEN}\x00*+(?:\\?\x00*+\^)?[\s\x00]*+"
    rf"({_HIDDEN_ID}(?:[\s\x00]*+{_SEPARATOR}[\s\x00]*+{_HIDDEN_ID})*+)[\s\x00]*+{_CLOSE}")
_SPLIT_IDS = re.compile(rf"\s*{_SEPARATOR}\s*")
_ESCAPED = re.compile(r"\\(.)")

# A character reference (``&#91;``, ``&#x5D;``, ``&lsqb;``) shows a reader the character it
# names, outside code. Those naming a character a marker is made of are read as that
# character, with _HIDDEN for the rest of the reference (offsets kept): ``&#91;d9&#93;`` is the
# marker the reader sees, and its span covers both references (an opening bracket is put
# first, a closing one last). A bracket so written is text, never a link's: ``&#91;d9&#93;(x)``
# shows ``[d9](x)``.
_MARKER_CHARS = frozenset(string.ascii_letters + string.digits
                          + "_.:-,; []^\t\uff3b\uff3d\u3001\uff0c\uff1b")
_REFERENCE = re.compile(r"&(?:#([0-9]{1,7})|#[xX]([0-9A-Fa-f]{1,6})|([A-Za-z][A-Za-z0-9]{1,31}));")
_NAMED = {name[:-1]: char for name, char in html.entities.html5.items()
          if name.endswith(";") and char in _MARKER_CHARS}


# A full-width opening bracket: a marker may start there as at "[" (looked for on its own: in a
# text with no character that wide, the usual answer, ``in`` answers at once).
_WIDE_OPEN = "\uff3b"


def _markers_in(text: str) -> Iterator[re.Match[str]]:
    if _HIDDEN in text:
        return _HIDDEN_MARKER_RE.finditer(text)
    return (MARKER_RE if _WIDE_OPEN in text else _ASCII_MARKER_RE).finditer(text)


# A sentence ends at . ! or ? (optionally followed by closing quotes or brackets), then any
# markers that follow the punctuation, then whitespace or the end of the text. A blank line ends
# a sentence too, punctuation or not, and so does the line break before a Markdown list item
# (``- ``, ``* ``, ``+ ``, ``1. ``, ``1) ``) or heading (``# ``): each item of a list is read on
# its own, so one that cites nothing is not covered by a marker in the item above it.
#
# A run of marks is read from its first mark only, and whole (possessive): tried again from each
# mark inside it, a long run followed by a letter was read once per mark (quadratic). A match
# always takes the whole run anyway, since what follows a shorter one is another mark.
_BLOCK_START = r"\n(?=[ \t]{0,3}(?:[-*+]|[0-9]{1,9}[.)]|#{1,6})[ \t])"
# The markers after a sentence mark: bracketed text, in ASCII or full-width brackets.
_TAIL = r"(?:\s*[\[\uff3b][^\[\]\uff3b\uff3d\n]*(?:\](?!\()|\uff3d))*"
_END_RE = re.compile(
    r"""(?<![.!?])[.!?]++["'\u2019\u201d)]*+(?P<tail>""" + _TAIL + r""")(?=\s|$)"""
    r"""|\n\s*\n|""" + _BLOCK_START,
)
# With ``cjk``, a sentence also ends at a Japanese full stop, exclamation or question mark
# (U+3002, U+FF01, U+FF1F) and the markers right after it, whatever follows: Japanese puts no
# space there. Followed by a closing bracket or quote, the mark ends a quotation inside the
# sentence, not the sentence.
_CJK_END_RE = re.compile(
    r"""(?:(?<![.!?])[.!?]++["'\u2019\u201d)]*+"""
    r"""|(?P<cjk>(?<![\u3002\uff01\uff1f])[\u3002\uff01\uff1f]++(?![\u3002\uff01\uff1f\u300d\u300f\uff09"'\u2019\u201d)])))"""
    r"""(?P<tail>""" + _TAIL + r""")(?(cjk)|(?=\s|$))|\n\s*\n|""" + _BLOCK_START,
)
# Words after which a full stop usually does not end a sentence.
_ABBREVIATIONS = frozenset(
    {"e.g", "i.e", "etc", "vs", "cf", "mr", "mrs", "ms", "dr", "st", "no", "approx", "incl"}
)
_WORD_CHARS = frozenset(string.ascii_letters + ".")


def _ids_in(text: str) -> list[str]:
    seen: dict[str, None] = {}
    for match in _markers_in(text):
        for ident in _SPLIT_IDS.split(match.group(1).replace(_HIDDEN, "")):
            seen.setdefault(_ESCAPED.sub(r"\1", ident) if "\\" in ident else ident, None)
    return list(seen)


# -- what is not prose: code and link destinations ---------------------------------------------

# A fence opens with three or more backticks or tildes, indented by at most three spaces; a
# backtick fence's info string may not contain a backtick. It closes with a line of at least as
# many of the same character, or at the end of the text.
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})([^\n]*)")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*\r?")
# Outside code, a backslash escapes the character after it, and a run of backticks opens a
# code span; a blank line (CRLF line ends too) ends the paragraph, and any code span with it.
# "<!--" opens an HTML comment; the longer pattern is used only on text that has one.
_ESCAPE_OR_TICKS = re.compile(r"\\.|`+", re.S)
_ESCAPE_TICKS_OR_COMMENT = re.compile(r"\\.|`+|<!--", re.S)
_COMMENT_OPEN = "<!--"
_COMMENT_CLOSE = "-->"
# A browser ends a comment at "--!>" too (after the opener: "<!--!>" ends nothing), and shows
# what follows, though CommonMark reads on to the next "-->".
_COMMENT_END = re.compile(r"--!?>")
_PARAGRAPH_END = re.compile(r"\n[ \t\r]*\n")
_AUTOLINK = re.compile(r"<[A-Za-z][A-Za-z0-9.+\-]{1,31}:[^\s<>]*>")
_LINK_OPEN = re.compile(r"\]\(")
_NOT_NEWLINE = re.compile(r"[^\n]")
_BLANK_LINE = re.compile(r"[ \t\r]*(?:\n|$)")


def _blank(text: str, spans: list[tuple[int, int]], *, joined: bool = False) -> str:
    """``text`` with each span's characters (newlines apart) turned into spaces. With
    ``joined``, a comment that every reading hides whole (closed by ``-->``, with no blank line
    in it) becomes ``_HIDDEN`` instead, newlines too: markers are read across it. CommonMark
    shows one that a blank line cuts, or that only ``--!>`` closes, as text."""
    if not spans:
        return text
    pieces: list[str] = []
    last = 0
    for start, end in spans:
        pieces.append(text[last:start])
        if joined and text.startswith(_COMMENT_OPEN, start) \
                and text.startswith(_COMMENT_CLOSE, end - len(_COMMENT_CLOSE)) \
                and not _PARAGRAPH_END.search(text, start, end):
            pieces.append(_HIDDEN * (end - start))
        else:
            pieces.append(_NOT_NEWLINE.sub(" ", text[start:end]))
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def _fences(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    fence = ""
    opened = pos = 0
    for line in text.split("\n"):
        if not fence:
            match = _FENCE_OPEN.fullmatch(line)
            if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
                fence, opened = match.group(1), pos
        else:
            match = _FENCE_CLOSE.fullmatch(line)
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                spans.append((opened, pos + len(line)))
                fence = ""
        pos += len(line) + 1
    if fence:
        spans.append((opened, len(text)))
    return spans


def _code_spans(text: str, *, comments: bool = False) -> list[tuple[int, int]]:
    """CommonMark code spans: a run of backticks not escaped by a backslash, up to the next run
    of exactly as many in the same paragraph (inside a span a backslash escapes nothing). A run
    with no such partner is literal backticks.

    With ``comments``, HTML comments too: ``<!--`` not escaped by a backslash, up to the first
    ``-->`` or ``--!>`` after it (``<!-->`` and ``<!--->`` are whole comments), across lines
    and blank lines alike. Whichever of a span and a comment starts first wins, as in
    CommonMark: a backtick inside a comment opens no span, and ``<!--`` inside a span opens no
    comment. A comment that is never closed runs to the end of the text. CommonMark shows such
    an opener as text unless it starts a line, but a renderer that passes it through to HTML
    leaves everything after it inside the comment: the gate takes the reading in which no
    hidden marker counts.
    """
    spans: list[tuple[int, int]] = []
    pos = 0
    scanner = _ESCAPE_TICKS_OR_COMMENT if comments else _ESCAPE_OR_TICKS
    # The next paragraph end found so far (-2: not looked for yet, -1: there is none), looked
    # for again only once the scan has passed it: linear however many backtick runs a long
    # paragraph holds.
    paragraph = -2
    while (match := scanner.search(text, pos)) is not None:
        pos = match.end()
        first = match.group()[0]
        if first == "\\":
            continue
        if first == "<":
            start = match.start()
            # "-->" may start just inside the opener ("<!-->" is whole), "--!>" only after it.
            # The scan goes on after the end: each character is read once however many
            # openers the text holds.
            end = _COMMENT_END.search(text, start + 2)
            while end is not None and end.start() < pos and end.group() == "--!>":
                end = _COMMENT_END.search(text, end.start() + 1)
            if end is None:
                spans.append((start, len(text)))
                break
            pos = end.end()
            spans.append((start, pos))
            continue
        if paragraph != -1 and paragraph < pos:
            found = _PARAGRAPH_END.search(text, pos)
            paragraph = found.start() if found else -1
        limit = paragraph if paragraph >= 0 else len(text)
        ticks = len(match.group())
        close = re.compile(rf"(?<!`)`{{{ticks}}}(?!`)").search(text, pos, limit)
        if close is not None:
            spans.append((match.start(), close.end()))
            pos = close.end()
    return spans


def _skip_space(text: str, pos: int) -> int:
    """Past spaces and tabs, and at most one line break."""
    newline = False
    while pos < len(text):
        char = text[pos]
        if char == "\n":
            if newline:
                break
            newline = True
        elif char not in " \t\r\x00":  # and what a comment hid
            break
        pos += 1
    return pos


# How deep parentheses may nest in a bare link destination (CommonMark lets an implementation
# set a limit; cmark's is this one). Deeper, it is no destination. Without a limit, a text of
# "]((a)" repeated had each of its "](" read to the end of the text.
_MAX_PAREN_DEPTH = 32
# The link titles read so far in one text, by closing character (``_title_end``).
_Titles = dict[str, tuple[int, int, int | None]]


def _link_tail_end(text: str, pos: int, titles: _Titles) -> int | None:
    """Where the ``)`` closing a link's ``(destination "title")`` is, ``pos`` being just after
    the ``(``; ``None`` when what follows is not a destination (CommonMark's rules, simplified:
    no spaces in a bare destination, parentheses balanced, backslash escapes). ``titles``
    remembers the titles read so far in ``text`` (``_title_end``)."""
    length = len(text)
    pos = _skip_space(text, pos)
    if pos < length and text[pos] == "<":
        pos += 1
        while pos < length and text[pos] not in "<>\n":
            pos += 2 if text[pos] == "\\" else 1
        if pos >= length or text[pos] != ">":
            return None
        pos += 1
    else:
        depth = 0
        while pos < length:
            char = text[pos]
            if char == "\\":
                pos += 2
                continue
            if char <= " ":
                break
            if char == "(":
                depth += 1
                if depth > _MAX_PAREN_DEPTH:
                    return None
            elif char == ")":
                if depth == 0:
                    break
                depth -= 1
            pos += 1
        if depth or pos >= length:
            return None
    after = _skip_space(text, pos)
    if after < length and after > pos and text[after] in "\"'(":
        end = _title_end(text, after + 1, ")" if text[after] == "(" else text[after], titles)
        if end is None:
            return None
        after = _skip_space(text, end + 1)
    if after < length and text[after] == ")":
        return after
    return None


def _title_end(text: str, pos: int, close: str, titles: _Titles) -> int | None:
    """Where a link title that starts at ``pos`` ends: its ``close`` not escaped by a
    backslash, or ``None`` when a blank line or the end of the text comes first.

    Each read is remembered by its closing character as (start, where it stopped, result). A
    title starting inside an earlier read of the same character, up to where that one stopped,
    ends as it did: the character before a title is its opener, never a backslash, so from
    there both read the same characters. Without that, a text of "](a (" repeated had each
    title read to the end of the text."""
    known = titles.get(close)
    if known is not None and known[0] <= pos <= known[1]:
        return known[2]
    start, length, found = pos, len(text), None
    while pos < length:
        char = text[pos]
        if char == close:
            found = pos
            break
        if char == "\n" and _BLANK_LINE.match(text, pos + 1):
            break  # a blank line ends the paragraph, and the title with it
        pos += 2 if char == "\\" else 1
    titles[close] = (start, min(pos, length), found)
    return found


def comment_spans(text: str) -> list[tuple[int, int]]:
    """Where in ``text`` the HTML comments are, as (start, end) offsets: what a reader never
    sees. Read as the gate reads them for markers (see ``_code_spans``): not inside fenced code
    or a code span, which shows ``<!--`` as it is; a comment never closed runs to the end."""
    if _COMMENT_OPEN not in text:
        return []
    if "```" in text or "~~~" in text:
        text = _blank(text, _fences(text))
    return [(start, end) for start, end in _code_spans(text, comments=True)
            if text.startswith(_COMMENT_OPEN, start)]


def _referenced(match: re.Match[str]) -> str:
    decimal, hexadecimal, name = match.groups()
    if name is not None:
        char = _NAMED.get(name)
    else:
        code = int(decimal) if decimal is not None else int(hexadecimal, 16)
        char = chr(code) if code < 0x110000 and chr(code) in _MARKER_CHARS else None
    if char is None:
        return match.group()
    hidden = _HIDDEN * (len(match.group()) - 1)
    return hidden + char if char in "]\uff3d" else char + hidden


def _no_link_opens(raw: str, text: str, close: int, since: int) -> bool:
    """Whether the ``]`` at ``close`` of ``text`` (``raw`` before its character references
    were read) starts no link: it or the ``[`` it closes is a reference, which is text, or that
    ``[`` is escaped by a backslash (``\\[d9](x)`` shows ``[d9](x)``). The ``[`` is the
    nearest bracket before it, looked for back to ``since`` only (where the last ``](`` was
    looked at: nearer than that, no bracket), so each character is read once in all. A
    full-width opening bracket (U+FF3B) nearest opens no link either: it and ``d9](x)`` show
    the reader a marker and "(x)"."""
    if raw[close] != "]":
        return True
    opener = max(text.rfind("[", since, close), text.rfind("]", since, close),
                 text.rfind(_WIDE_OPEN, since, close))
    if opener < 0 or text[opener] not in "[\uff3b":
        return False
    if raw[opener] != "[":
        return True
    backslashes = 0
    while opener - backslashes > 0 and text[opener - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _prose(text: str) -> str:
    """``text`` with code, HTML comments and link destinations blanked out, offsets unchanged.

    Fenced code blocks, code spans, HTML comments, the ``(destination "title")`` of a Markdown
    link or image and autolinks become spaces (line breaks are kept), so that the brackets in
    them are not taken for citation markers: none of them shows a reader a citation.
    """
    if _HIDDEN in text:
        # CommonMark shows a NUL as U+FFFD, which ends an id: only a comment may join one.
        text = text.replace(_HIDDEN, "\ufffd")
    if "```" in text or "~~~" in text:
        text = _blank(text, _fences(text))
    # After the fences: an opener inside a fenced block is code, already blanked.
    comments = _COMMENT_OPEN in text
    if comments or "`" in text:
        text = _blank(text, _code_spans(text, comments=comments), joined=comments)
    raw = text
    if "&" in text:
        text = _REFERENCE.sub(_referenced, text)
    if "](" in text:
        spans: list[tuple[int, int]] = []
        done = since = 0
        titles: _Titles = {}
        for match in _LINK_OPEN.finditer(text):
            looked, since = since, match.start()
            if match.end() <= done:
                continue
            end = (None if _no_link_opens(raw, text, match.start(), looked)
                   else _link_tail_end(text, match.end(), titles))
            if end is not None:
                spans.append((match.end(), end))
                done = end
            else:
                # "[d9](per the policy)", "\\[d9](x)" and "&#91;d9&#93;(x)" are no links: a
                # reader sees the marker, so does the gate.
                spans.append((match.end() - 1, match.end()))
        text = _blank(text, spans)
    if "<" in text:
        text = _blank(text, [match.span() for match in _AUTOLINK.finditer(text)])
    return text


def _may_cite(text: str) -> bool:
    """Whether ``text`` may hold a marker: a bracket (ASCII or full-width), or a character
    reference for one."""
    return "[" in text or "&" in text or _WIDE_OPEN in text


def extract_markers(text: str) -> list[str]:
    """Return the ids cited by markers in ``text``, each once, in order of first appearance."""
    if not _may_cite(text):
        return []
    return _ids_in(_prose(text))


def marker_spans(text: str) -> list[tuple[int, int]]:
    """Where in ``text`` the markers the gate reads are (none inside code, an HTML comment or a
    link's target), as (start, end) offsets: what a reader of the text sees as citations."""
    if not _may_cite(text):
        return []
    return [match.span() for match in _markers_in(_prose(text))]


def _is_abbreviation(text: str, dot: int) -> bool:
    """Whether the full stop at ``dot`` closes an abbreviation or an initial, not a sentence."""
    if text[dot] != ".":
        return False
    # The word is the run of ASCII letters and dots that ends at the stop, from its first
    # letter. Read backwards from the stop: a pattern anchored at the stop and searched from the
    # start of the text tried every offset before it, for every stop (quadratic in the text).
    start = dot
    while start > 0 and text[start - 1] in _WORD_CHARS:
        start -= 1
    token = text[start:dot].lstrip(".").lower()
    if not token:
        return False
    # "e.g", "U.S": a dotted token is an abbreviation; so are the listed words.
    return "." in token or token in _ABBREVIATIONS


def _is_list_number(text: str, dot: int) -> bool:
    """Whether the full stop at ``dot`` is that of an ordered list item's number (``12. `` at
    the start of a line, indented at most three spaces), which starts a sentence, not ends
    one. Read backwards a few characters at most: never the whole line."""
    if text[dot] != "." or text[dot + 1:dot + 2] not in (" ", "\t"):
        return False
    start = dot
    while start > 0 and dot - start < 9 and text[start - 1].isascii() \
            and text[start - 1].isdigit():
        start -= 1
    if start == dot:
        return False
    indent = start
    while indent > 0 and start - indent < 3 and text[indent - 1] == " ":
        indent -= 1
    return indent == 0 or text[indent - 1] == "\n"


def split_sentences(text: str, *, cjk: bool = False) -> list[Sentence]:
    """Split ``text`` into sentences, each with the ids of the markers inside or right after it.

    Offsets refer to ``text``; whitespace between sentences belongs to none of them. With
    ``cjk``, Japanese sentence marks end a sentence too, even with no whitespace after them
    (for display; the gate itself never splits that way).
    """
    sentences: list[Sentence] = []
    start = 0
    length = len(text)
    # Markers are read from the text with code, comments and link destinations blanked out
    # (same offsets). A sentence that is only a comment is kept, citing nothing.
    scan = _prose(text) if _may_cite(text) else text
    # Ends are read with comments blanked (offsets kept): none falls inside what the reader
    # never sees, such as the full stop of "[d<!-- x. -->1]".
    ends = _blank(text, comment_spans(text)) if _COMMENT_OPEN in text else text
    for match in (_CJK_END_RE if cjk else _END_RE).finditer(ends):
        if match.group("tail") is not None and (_is_abbreviation(ends, match.start())
                                                or _is_list_number(ends, match.start())):
            continue
        end = match.end() if match.group("tail") is not None else match.start()
        _append(sentences, text, scan, start, end)
        start = match.end()
    _append(sentences, text, scan, start, length)
    return sentences


def _append(sentences: list[Sentence], text: str, scan: str, start: int, end: int) -> None:
    # Trim surrounding whitespace so that the offsets frame the sentence itself.
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start == end:
        return
    chunk = text[start:end]
    markers = tuple(_ids_in(scan[start:end])) if _may_cite(chunk) else ()
    sentences.append(Sentence(text=chunk, markers=markers, start=start, end=end))
