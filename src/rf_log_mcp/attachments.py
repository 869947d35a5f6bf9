"""Attachments: what an HTML message refers to (screenshots, links, videos), as structure
instead of markup (read side, response shaping), and the bytes of one (``open_attachment``,
the get_attachment tool).

Libraries log HTML messages (``html=True``, ``*HTML*``) to put files in log.html:
SeleniumLibrary's and the Browser library's screenshots (``<a href=F><img src=F ...></a>``
relative to the output folder, or ``<img src="data:image/png;base64,...">`` embedded), RF's
``Log ... html=True`` with any links and images. Answers show each reference once with its
kind, media type, size and whether it exists; search matches the text and the references
(``searchable``), not the markup.

Files are only read below the run's output folder (where robot and the libraries wrote them)
or an allowed root (``paths.PathPolicy``); data URIs are decoded in memory; nothing is
written, fetched from a network or run.
"""

from __future__ import annotations

import base64
import binascii
import io
import mimetypes
import re
from dataclasses import dataclass
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from rf_log_listener.errors import ATTACHMENT_NOT_FOUND, ResultError
from rf_log_listener.schema import indexed_text

UNSUPPORTED_ATTACHMENT = "UNSUPPORTED_ATTACHMENT"
# Images larger than this are downscaled before they are sent: the long side and the pixel
# count that mainstream multimodal hosts take without resizing (Claude: 1568 px, ~1.15 MP),
# and a byte size well under their per-image limits (5 MB).
MAX_SIDE = 1568
MAX_PIXELS = 1_150_000
MAX_IMAGE_BYTES = 3_000_000
MAX_READ_BYTES = 50_000_000  # a file larger than this is not read
_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp"})
_TEXTS = ("text/", "application/json", "application/xml")
_MEDIA = {".log": "text/plain", ".md": "text/markdown", ".yaml": "text/yaml", ".yml": "text/yaml",
          ".webp": "image/webp", ".webm": "video/webm", ".har": "application/json"}
_ELEMENTS = {"img": ("src", "image"), "a": ("href", "link"), "video": ("src", "video"),
             "source": ("src", "video"), "embed": ("src", "other"), "iframe": ("src", "other"),
             "object": ("data", "other")}
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Reference:
    kind: str  # image, link, video, other
    reference: str  # as written (a data URI whole)


class _Markup(HTMLParser):
    """The references, the visible text and the labels (``alt``, ``title``: what an image
    says in words) of one HTML message."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[Reference] = []
        self.text: list[str] = []
        self.labels: list[str] = []
        self.cells = 0  # the cells of the table row being read so far

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        attribute, kind = _ELEMENTS.get(tag, (None, None))
        value = attributes.get(attribute) if attribute else None
        if value and kind:
            self.found.append(Reference(kind, value.strip()))
        self.labels.extend(label for name in ("alt", "title") if (label := attributes.get(name)))
        if tag in ("br", "hr"):
            self.text.append(_BREAK)
        elif tag == "tr":
            self.cells = 0
        elif tag in ("td", "th"):
            # a row's cells apart, as log.html's table shows them (DatabaseLibrary's query
            # results: "0 | 1 | alice", not "01alice")
            if self.cells:
                self.text.append(" | ")
            self.cells += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _BLOCKS and not self._at_line_start():  # nested blocks end on one line
            self.text.append(_BREAK)

    def _at_line_start(self) -> bool:
        for piece in reversed(self.text):
            if piece == _BREAK:
                return True
            if piece.strip():
                return False
        return True

    def handle_data(self, data: str) -> None:
        self.text.append(data)


# Where log.html starts a new line (as ``status_text`` reads a status message): kept as a line
# break in the text, which otherwise reads as HTML does, each run of white space one space.
_BREAK = "\x00"
_BLOCKS = frozenset({"p", "div", "li", "tr", "caption", "table", "h1", "h2", "h3", "h4", "h5",
                     "h6"})
_AROUND_BREAK = re.compile(" ?\x00 ?")


def _text(pieces: list[str]) -> str:
    return _AROUND_BREAK.sub("\n", _SPACES.sub(" ", "".join(pieces).replace(_BREAK, " \x00 "))
                             ).strip()


def parse(markup: str) -> tuple[str, list[Reference]]:
    """The visible text of an HTML message and its references, each once (an image that
    links to itself is one image)."""
    text, found, _ = _parsed(markup)
    return text, found


def searchable(markup: str) -> str:
    """What a search matches in an HTML message: its visible text, then its labels and its
    references, each on a line of its own, a data URI as answers show it
    (``data:image/png;base64,…``), not its payload."""
    # without payloads first: reading a screenshot's megabyte of base64 costs 2-3x more
    text, found, labels = _parsed(indexed_text(markup) if "base64," in markup else markup)
    return "\n".join(part for part in (text, *labels, *(
        reference.reference.split(",", 1)[0] + ",…" if reference.reference.startswith("data:")
        else reference.reference for reference in found)) if part)


def _parsed(markup: str) -> tuple[str, list[Reference], list[str]]:
    parser = _Markup()
    try:
        parser.feed(markup)
        parser.close()
    except (AssertionError, ValueError):  # markup HTMLParser gives up on: text only
        return _SPACES.sub(" ", unescape(re.sub(r"<[^>]*>", " ", markup))).strip(), [], []
    by_reference: dict[str, Reference] = {}
    for found in parser.found:
        known = by_reference.get(found.reference)
        if known is None or (known.kind == "link" and found.kind != "link"):
            by_reference[found.reference] = found
    text = _text(parser.text)
    return text, list(by_reference.values()), [_SPACES.sub(" ", label).strip()
                                               for label in parser.labels]


def describe(found: Reference, base: str | None) -> dict[str, Any]:
    """What answers show of a reference (models.Attachment), never its bytes: a data URI by
    its header and decoded size, a file by its path, size and whether it exists below the
    run's output folder ``base``."""
    if found.reference.startswith("data:"):
        header, media, payload = _data_uri(found.reference)
        size = (len(payload) * 3) // 4 - payload[-2:].count("=") if header.endswith(";base64") \
            else len(unquote(payload).encode())
        return {"kind": found.kind, "reference": f"{header},…", "embedded": True,
                "media_type": media, "size_bytes": size, "exists": True}
    item: dict[str, Any] = {"kind": found.kind, "reference": found.reference, "embedded": False,
                            "media_type": _media_type(found.reference)}
    path = local_path(found.reference, base)
    if path is not None:
        item["exists"] = path.is_file()
        if item["exists"]:
            item["size_bytes"] = path.stat().st_size
    return item


def local_path(reference: str, base: str | None) -> Path | None:
    """The file a reference names, when it is a file below ``base`` (URLs, and paths that
    lead out of the output folder, are not looked at)."""
    if _is_url(reference) or base is None:
        return None
    path = _file(reference, base)
    return path if path.is_relative_to(Path(base).resolve()) else None


def _is_url(reference: str) -> bool:
    parts = urlsplit(reference)
    return parts.scheme not in ("", "file") or bool(parts.netloc)


def _file(reference: str, base: str) -> Path:
    """The file a local reference (a path, a file: URL) names, resolved; a relative one is
    relative to the run's output folder ``base``."""
    path = Path(unquote(urlsplit(reference).path))
    return (path if path.is_absolute() else Path(base, path)).resolve()


def _data_uri(reference: str) -> tuple[str, str, str]:
    """A data URI's header, media type and payload."""
    header, _, payload = reference.partition(",")
    return header, header[5:].split(";")[0] or "text/plain", payload


def _media_type(reference: str) -> str | None:
    suffix = Path(urlsplit(reference).path).suffix.lower()
    return _MEDIA.get(suffix) or mimetypes.types_map.get(suffix)


@dataclass(frozen=True)
class Opened:
    """An attachment's content: image bytes to send, or text."""

    media_type: str
    data: bytes | None = None  # an image, downscaled if it was larger than the limits
    text: str | None = None
    original_size: tuple[int, int] | None = None
    shown_size: tuple[int, int] | None = None
    size_bytes: int = 0


def open_attachment(found: Reference, base: str | None, allowed: Any) -> Opened:
    """The content of one reference. ``allowed(path)`` raises PATH_NOT_ALLOWED for a file
    outside the folders the server may read."""
    media, raw = read(found, base, allowed)
    if media in _IMAGES:
        return _image(raw, media)
    if media.startswith(_TEXTS) or media in ("image/svg+xml",):
        return Opened(media, text=raw.decode("utf-8", errors="replace"), size_bytes=len(raw))
    raise ResultError(UNSUPPORTED_ATTACHMENT, f"Attachments of type {media} cannot be opened here.",
                      "Images (PNG, JPEG, GIF, WebP) come back as images, text files as text.")


def read(found: Reference, base: str | None, allowed: Any) -> tuple[str, bytes]:
    """A reference's media type and bytes as stored: a data URI decoded, a file read."""
    if found.reference.startswith("data:"):
        header, media, payload = _data_uri(found.reference)
        try:
            raw = base64.b64decode(payload, validate=False) if header.endswith(";base64") \
                else unquote(payload).encode()
        except (binascii.Error, ValueError):
            raise ResultError(UNSUPPORTED_ATTACHMENT, "The embedded data is not valid base64.") from None
    else:
        if _is_url(found.reference):
            raise ResultError(UNSUPPORTED_ATTACHMENT, f"{found.reference!r} is not a local file.",
                              "This server never fetches URLs; open it in a browser.")
        if base is None:
            raise ResultError(ATTACHMENT_NOT_FOUND, "The run has no output folder to read "
                              f"{found.reference!r} from (robot ran with --output NONE?).")
        target = _file(found.reference, base)
        if not target.is_relative_to(Path(base).resolve()):
            allowed(str(target))  # a reference that leads out of the output folder
        if not target.is_file():
            raise ResultError(ATTACHMENT_NOT_FOUND, f"{target} does not exist (any more).",
                              "The run's output folder was moved or cleaned.")
        media = _media_type(found.reference) or "application/octet-stream"
        if target.stat().st_size > MAX_READ_BYTES:
            raise ResultError(UNSUPPORTED_ATTACHMENT, f"{target} is larger than {MAX_READ_BYTES} bytes.")
        raw = target.read_bytes()
    return media, raw


def _image(raw: bytes, media: str) -> Opened:
    """PNG and JPEG as they are when within the limits; anything else, or larger, decoded
    and sent as PNG (JPEG for photos that stay too large)."""
    from PIL import Image, UnidentifiedImageError

    try:
        image = Image.open(io.BytesIO(raw))
        image.load()
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError):
        raise ResultError(UNSUPPORTED_ATTACHMENT, f"The {media} data is not a readable image.") from None
    width, height = image.size
    fits = max(width, height) <= MAX_SIDE and width * height <= MAX_PIXELS
    if fits and media in ("image/png", "image/jpeg") and len(raw) <= MAX_IMAGE_BYTES:
        return Opened(media, data=raw, original_size=(width, height), shown_size=(width, height),
                      size_bytes=len(raw))
    scale = min(1.0, MAX_SIDE / max(width, height), (MAX_PIXELS / (width * height)) ** 0.5)
    shown = image.convert("RGBA" if image.mode in ("RGBA", "LA", "P") else "RGB")
    if scale < 1.0:
        shown = shown.resize((max(1, int(width * scale)), max(1, int(height * scale))),
                             Image.Resampling.LANCZOS)
    out = io.BytesIO()
    shown.save(out, format="PNG", optimize=True)
    data, kind = out.getvalue(), "image/png"
    if len(data) > MAX_IMAGE_BYTES:
        out = io.BytesIO()
        shown.convert("RGB").save(out, format="JPEG", quality=85)
        data, kind = out.getvalue(), "image/jpeg"
    return Opened(kind, data=data, original_size=(width, height), shown_size=shown.size,
                  size_bytes=len(raw))
