"""What is secret in a run's text, shared by both sides: the capture side registers the
values it finds (``registry``), the read side masks them in everything it returns.

Robot logs secrets in many shapes: ``password=…`` arguments, ``${TOKEN} = …`` assignments,
``Authorization: Bearer …`` headers, JSON bodies, URL credentials, private keys, and the
positional arguments of keywords such as ``Input Password``. The store keeps them (it is the
record of the run); a response never carries them. Only values are replaced, by ``***``:
the field name and the text around it stay, so the evidence still reads.

Two layers use this module: the views mask each text before it is shortened (so a cut can
never leave half a secret without its key), and ``service`` passes every string of the
finished response through :meth:`Redactor.text` once more, as a safety net.

Values once known to be secret (a run's registered values, see ``registry``) are masked
wherever they occur, before the shape rules run: :meth:`Redactor.for_run`. Which values a
text's secrets have, to be registered, is ``value_finding``'s (mixed into ``Redactor``).

An operator can add key words (``RF_LOG_MCP_SECRET_KEYS=pin,otp``) and regular expressions
(``RF_LOG_MCP_SECRET_PATTERNS``: one regex, or a JSON list; group 1 is masked when the
pattern has one, else the whole match). No tool argument turns masking off.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Iterable
from functools import cache

from rf_log_listener.argument_passwords import masked_argument_passwords
from rf_log_listener.errors import ResultError
from rf_log_listener.gated_shapes import TRIGGER_MARKS, masked_gated
from rf_log_listener.known_values import KnownValues
from rf_log_listener.named_values import (
    LIBRARY_MESSAGES,
    environment_value,
    masked_collection,
    masked_compared,
    masked_value,
    may_compare,
    network_name,
)
from rf_log_listener.secret_names import (
    NAME_CLOSE,
    PAIR_BETWEEN,
    PARAMETERS_BETWEEN,
    SECRET_WORD_SPELLINGS,
    SECRET_WORDS,
    alternation,
    compared_values,
    key_value,
    name_steps,
    name_value_pair,
    plural_collection,
    shared_prefixes,
    spellings,
    whole_line,
    xml_element,
    xml_named_text,
)
from rf_log_listener.secret_shapes import (
    MASK,
    PROSE_MARK,
    PROSE_PASSWORD,
    compiled_shapes,
    lazy_pattern,
    masked_base64_key,
    masked_credentials,
    masked_credentials_after,
    masked_curl_user,
    masked_identified_by,
    masked_key,
    masked_password_option,
    masked_prose_password,
    masked_scheme,
    masked_secret_option,
    masked_span,
    masked_vendor_token,
    may_hold_password_option,
    shape_marks,
    typed_password,
)
from rf_log_listener.step_masking import StepMasking
from rf_log_listener.value_finding import ValueFinding

_DEFAULT_NAMES = sorted(SECRET_WORDS, key=len, reverse=True)  # a Redactor's without extra words
ENV_KEYS = "RF_LOG_MCP_SECRET_KEYS"
ENV_PATTERNS = "RF_LOG_MCP_SECRET_PATTERNS"
INVALID_SETTING = "INVALID_SETTING"


_ASCII_NOT_ALNUM = "".join(chr(c) for c in range(128) if not chr(c).isalnum())
_WORD = lazy_pattern(r"[^\W_]+")  # a word of a keyword's name (snake_case: words too)


_NO_VALUES = KnownValues(())


class Redactor(StepMasking, ValueFinding):
    """Masks secret values in texts and in the structured parts of nodes; counts them."""

    known: KnownValues = _NO_VALUES

    def __init__(self, extra_words: Iterable[str] = (), extra_patterns: Iterable[str] = ()) -> None:
        extra = [re.escape(w.strip().lower()) for w in extra_words if w.strip()]
        self._secret_keywords: dict[str, bool] = {}
        self._words = alternation([*SECRET_WORDS, *extra])
        # On lower-cased text, longest first (``authorization`` before ``auth``): several
        # times faster than a case-insensitive search, which the writer runs on every message.
        self._longest_first_names = sorted([*SECRET_WORDS, *extra], key=len, reverse=True)
        self._longest_first = alternation(self._longest_first_names)
        self._extra = []
        for pattern in extra_patterns:
            try:
                self._extra.append(re.compile(pattern))
            except re.error as exc:
                raise ResultError(INVALID_SETTING, f"{ENV_PATTERNS} has an invalid pattern "
                                  f"{pattern!r}: {exc}.", "Fix or remove it; masking stays on.") from None

    # The patterns are compiled when first used, each once (about 11 ms for all of them): a
    # process that only asks whether a name is secret (the listener in robot) compiles one,
    # a command whose texts hold no secret's name before a separator, nor a secret's shape,
    # compiles only the trigger.

    @functools.cached_property
    def _trigger(self) -> re.Pattern[str]:
        """What every shape and name rule of :meth:`text` needs somewhere in a text to match
        at all, under the same case-insensitive matching as those rules: a secret's name
        followed by a separator (perhaps after a closing quote or brace, and white space:
        ``password=``, ``"token": ``, ``${API_KEY} =``, the header lines ``Authorization:`` and
        ``Cookie:``; every name rule reads a value after one), a private key's armour
        (``PRIVATE KEY``), ``://`` (URL credentials, webhooks), ``bearer``, a JWT's ``eyJ``, a
        vendor token's prefix, ``curl``, SQL's ``IDENTIFIED BY`` (``shape_marks``), the gated
        shapes' marks (``gated_shapes``: ``requirepass``, ``-auth``, ...), a
        secret-named XML element (``password>``), an XML element a secret's name names
        (``name="db.password">``, ``Password</key>``), a password in prose with a value that may
        be one (``PROSE_MARK``); a command's password option is looked for apart
        (``may_hold_password_option``). A text without any of these is left as it is by
        every one of those rules, so one scan replaces eleven (and their compilation). A name alone does not
        trigger: prose holds the short ones in its words (``inside``, ``author``), and a
        reading command would compile every rule for them."""
        return re.compile(f"(?i){self._trigger_parts}")

    @functools.cached_property
    def _ascii_trigger(self) -> re.Pattern[str] | None:
        """``_trigger`` for a lower-cased ASCII text: the same answer (no other character
        case-folds to an ASCII letter there), ten times faster than ``re``'s case-insensitive
        scan (10 → 1 µs a short message). None when an operator's word is not ASCII: one of
        its letters may match an ASCII one only case-insensitively (the long s, U+017F, and s)."""
        if not self._trigger_parts.isascii():
            return None
        return re.compile(self._trigger_parts)

    @functools.cached_property
    def _trigger_parts(self) -> str:
        # a name, then a separator or the end of a tag (an XML element's closing tag ends so):
        # the names once, their tree is most of this pattern's compiling (a plural too:
        # ``api_keys=[...]``; ``tokens=4`` triggers and no rule masks it); before the
        # separator an escaped quote (``\"token\":``) or RF's comparisons' ``(Password):``
        # and ``'password' does not match:`` (``compared_values``); or a name-value pair's
        # value key after it (``"name": "API_TOKEN", "value":``, ``name_value_pair``); or an
        # attribute's quote and its tag's end, or a key or name element's (``xml_named_text``),
        # or a setter's next argument (``setItem('token', 'x')``: ``name_value_pair``)
        return "|".join((*shape_marks(TRIGGER_MARKS), PROSE_MARK,
                         rf"""(?:{self._names_tree})s?(?:(?:{NAME_CLOSE}|\)|' does not match)?\s*[?+]?[:=]"""
                         rf"""|\s*>|{PAIR_BETWEEN}|["']?{PARAMETERS_BETWEEN}|["'][^<>]{{0,500}}>"""
                         r"""|\s*</(?:key|name)>|["']\s*,\s*["'])"""))

    @functools.cached_property
    def _mentions(self) -> re.Pattern[str]:
        return re.compile(self._longest_first)

    @functools.cached_property
    def _named_value(self) -> re.Pattern[str]:
        """A secret's name (or its plural: ``plural``) followed by a separator: where a value
        may follow (lower-cased)."""
        return re.compile(
            rf"""(?P<name>{self._longest_first})(?P<plural>s)?\\{{0,3}}["'}}]?\]?[ \t]*[?+]?[:=]""")

    @functools.cached_property
    def _named_value_backwards(self) -> re.Pattern[str] | None:
        """``_named_value`` for the reversed text: the separator first. ``re`` tries every
        name at every position of a text, but skips straight to the few ``:`` and ``=`` a
        text holds when a pattern starts with them (the writer asks this of every message:
        8.6 → 4.1 µs a message of a generated 100 MB output.xml, JSON bodies and all). None
        when a name is more than a plain sequence of characters and classes, each at most
        optional (no reversed form is made for it then)."""
        names = self._reversed_names
        if names is None:
            return None
        # a plural too (``api_keys=[``): ``secret_values`` reads a collection after one; an
        # escaped quote (``\"token\":``) as the quote and backslashes, as ``_named_value``
        # (a little wider than NAME_CLOSE: one optional group fewer, 0.98 → 0.88 µs a message)
        return re.compile(rf"""[:=][?+]?[ \t]*\]?["'}}]?\\{{0,3}}s?(?:{names})""")

    @functools.cached_property
    def _reversed_names(self) -> str | None:
        """The names reversed, their steps' shared prefixes once (``shared_prefixes``: for
        the reversed text ``yek[-_. ]?ipa`` and ``yek[-_. ]?ssecca`` share ``yek[-_. ]?``); None
        when one is more than steps."""
        steps = self._name_steps
        return None if steps is None else shared_prefixes(each[::-1] for each in steps)

    @functools.cached_property
    def _names_secret(self) -> re.Pattern[str]:
        return re.compile(rf"(?i)(?:{self._words})[\W_]*$")

    @functools.cached_property
    def _secret_endings(self) -> tuple[tuple[str, ...], int] | None:
        """Every spelling of every name, lower-cased, and the longest's length
        (``_names_secret`` as literal endings: ``str.endswith`` needs no compiling, which
        costs ~1 ms in every robot process that loads the listener, and is several times
        faster). None when a name has no finite list of ASCII spellings ending in a letter
        or digit: ``_names_secret`` answers then."""
        if self._longest_first_names == _DEFAULT_NAMES:  # no operator's words: spelled out
            return SECRET_WORD_SPELLINGS, max(map(len, SECRET_WORD_SPELLINGS))
        endings: list[str] = []
        for name in self._longest_first_names:
            spelled = spellings(name)
            if spelled is None or not all(s.isascii() and s[-1:].isalnum() for s in spelled):
                return None
            endings += spelled
        return tuple(endings), max(map(len, endings), default=0)

    @functools.cached_property
    def _key_value(self) -> re.Pattern[str]:
        return key_value(rf"[\w.-]*?(?:{self._names_tree})")

    @functools.cached_property
    def _names_tree(self) -> str:
        """The names as one pattern, their shared prefixes once (``shared_prefixes``) where
        each is a sequence of steps, else their alternation."""
        steps = self._name_steps
        return self._words if steps is None else shared_prefixes(steps)

    @functools.cached_property
    def _name_steps(self) -> list[list[str]] | None:
        """Each name's steps (``name_steps``); None when one is more than steps."""
        steps = [name_steps(name) for name in self._longest_first_names]
        return None if None in steps else steps  # type: ignore[return-value]

    @functools.cached_property
    def _plural_collection(self) -> re.Pattern[str]:
        return plural_collection(self._names_tree)

    @functools.cached_property
    def _plural_backwards(self) -> re.Pattern[str] | None:
        """``_plural_collection``'s name, separator and opening bracket, for the reversed
        lower-cased text (the bracket first: ``re`` skips to the few a text holds, where the
        forward rule tries every name at every word)."""
        names = self._reversed_names
        if names is None:
            return None
        return re.compile(rf"""[\[({{]\s*[:=]\s*["'}}]?s(?:{names})""")

    def _holds_plural(self, text: str, lowered: str | None = None) -> bool:
        """Whether ``_plural_collection`` may match ``text`` (lower-cased: ``lowered``): a
        secret's plural name, a separator and a collection's opening bracket (for ASCII
        texts; others are searched)."""
        if "[" not in text and "(" not in text and "{" not in text:
            return False
        backwards = self._plural_backwards
        if backwards is None or not text.isascii():
            return self._plural_collection.search(text) is not None
        return backwards.search((text.lower() if lowered is None else lowered)[::-1]) is not None

    @functools.cached_property
    def _compared_values(self) -> re.Pattern[str]:
        return compared_values(self._names_tree)

    @functools.cached_property
    def _whole_line(self) -> re.Pattern[str]:
        return whole_line(self._names_tree)

    @functools.cached_property
    def _xml_element(self) -> re.Pattern[str]:
        return xml_element(self._names_tree)

    @functools.cached_property
    def _xml_named_text(self) -> re.Pattern[str]:
        return xml_named_text(self._names_tree)

    @functools.cached_property
    def _name_value_pair(self) -> re.Pattern[str]:
        return name_value_pair(self._names_tree)

    def prepare(self) -> None:
        """Compile what :meth:`text` can use, ahead of its first text: the MCP server does it
        while the host's model writes its first call (issue #19)."""
        _ = self._ascii_trigger, self._trigger, compiled_shapes(), self._whole_line, self._key_value, \
            self._xml_element, self._xml_named_text, self._compared_values, self._name_value_pair, \
            PROSE_PASSWORD()

    # -- texts -------------------------------------------------------------------------

    def for_run(self, known: KnownValues) -> Redactor:
        """This redactor, also masking ``known`` (one run's registered values)."""
        if not known:
            return self
        run = object.__new__(type(self))  # copy.copy's shallow copy, without loading copy
        run.__dict__.update(self.__dict__)
        run.known = known
        return run

    def text(self, value: str) -> tuple[str, int]:
        """``value`` with every secret value replaced by ``***``, and how many were."""
        if not value:
            return value, 0
        value, known = self.known.mask(value)
        # SeleniumLibrary's typing message and OperatingSystem's environment variable set, by
        # finds before the trigger: as marks, they would run every rule on each such message
        if value.startswith(LIBRARY_MESSAGES):
            value, typed = masked_span(value, typed_password(value))
            value, environment = masked_span(value, environment_value(value, self.names_secret))
            known += typed + environment
        value, given = masked_argument_passwords(value)  # by a few finds, as typed text
        known += given
        fast = self._ascii_trigger if value.isascii() else None
        lowered = None
        if fast is not None:
            lowered = value.lower()
            triggered = fast.search(lowered) is not None
        else:
            triggered = self._trigger.search(value) is not None
        if not triggered and "-" in value:
            triggered = may_hold_password_option(value, lowered)
        if not triggered and not self._extra:
            return value, known
        counter = [known]

        def sub(pattern: re.Pattern[str], text: str, repl: Callable[[re.Match[str]], str]) -> str:
            def counted(match: re.Match[str]) -> str:
                out = repl(match)
                if out != match[0]:
                    counter[0] += 1
                return out
            return pattern.sub(counted, text)

        text = value
        if triggered:
            shapes = compiled_shapes()
            text = sub(shapes.private_key, text, masked_key)
            text = sub(self._whole_line, text, masked_value)
            if may_compare(text):
                text = sub(self._compared_values, text, masked_compared)
            text = sub(self._key_value, text, masked_value)
            if self._holds_plural(text):
                text = sub(self._plural_collection, text, masked_collection)
            text = sub(self._xml_element, text, masked_value)
            if "</" in text:
                text = sub(self._xml_named_text, text, masked_value)
            if "alue" in text or "(" in text:  # the value key, PowerShell's -Value, a setter's call
                text = sub(self._name_value_pair, text, masked_value)
            text = sub(shapes.url_credentials, text, masked_credentials)
            text = sub(shapes.curl_user, text, masked_curl_user)
            text = sub(shapes.password_option, text, masked_password_option)
            text = sub(shapes.identified_by, text, masked_identified_by)
            text = sub(shapes.sudo_stdin, text, masked_credentials_after)
            text = sub(shapes.stdin_herestring, text, masked_credentials_after)
            text = sub(shapes.openssl_pass, text, masked_credentials_after)
            text = sub(shapes.secure_string, text, masked_credentials_after)
            text = sub(shapes.secret_option, text, masked_secret_option)
            text = sub(shapes.webhook, text, masked_credentials_after)
            text = sub(shapes.sas_signature, text, masked_credentials_after)
            text = sub(shapes.scheme_credentials, text, masked_scheme)
            # the gate asks substrings only: the text's lower case before the rules above serves
            text = masked_gated(text, value.lower() if lowered is None else lowered, sub)
            text = sub(PROSE_PASSWORD(), text, masked_prose_password)
            text = sub(shapes.jwt, text, lambda m: MASK)
            text = sub(shapes.base64_pem, text, masked_base64_key)
            text = sub(shapes.vendor_tokens, text, masked_vendor_token)
        for pattern in self._extra:
            text = sub(pattern, text, _masked_group)
        return text, counter[0]

    def mentions_secret(self, text: str) -> bool:
        return self.mentions_in_lowered(text.lower())

    def mentions_in_lowered(self, lowered: str) -> bool:
        """``mentions_secret`` of a text already lower-cased."""
        return self._mentions.search(lowered) is not None

    def names_secrets(self, text: str) -> bool:
        """``text`` ends with a secret's name in the plural (``@{API_TOKENS}``, ``passwords``):
        a collection of secrets when its value is one (``plural_collection``)."""
        stripped = text.rstrip(_ASCII_NOT_ALNUM)
        return stripped[-1:] in ("s", "S") and self.names_secret(stripped[:-1])

    def names_secret(self, text: str) -> bool:
        """``text`` ends with a secret's name: ``${TOKEN}``, ``id:password``, ``db_pwd``; not
        a network's (``${WIFI_SSID}``: ``network_name``)."""
        literal = self._secret_endings
        if literal is None or not text.isascii():  # case-folding beyond ASCII: re's answer
            return bool(self._names_secret.search(text)) and not network_name(text)
        endings, longest = literal
        # [\W_]*$ of an ASCII text: the characters that are not letters or digits
        ending = text.rstrip(_ASCII_NOT_ALNUM)[-longest:].lower()
        return ending.endswith(endings) and not network_name(ending)

    def keyword_names_secret(self, name: str) -> bool:
        """A word of a keyword's name ends with a secret's name, or its plural (``Input
        Password``, ``Set Api Key``, ``Get Auth Token For User``, ``Set Tokens``): its values
        are secrets. Not a word that only holds one (``Open Sidebar``, ``Click Inside``,
        ``Should Be Authentic``). Asked for every keyword an answer shows: once per name."""
        known = self._secret_keywords.get(name)
        if known is None:
            if len(self._secret_keywords) >= 4096:
                self._secret_keywords.clear()
            known = self._secret_keywords[name] = any(
                self.names_secret(name[:end]) or (name[end - 1] in "sS" and self.names_secret(
                    name[:end - 1])) for end in (word.end() for word in _WORD().finditer(name)))
        return known




def _masked_group(match: re.Match[str]) -> str:
    if match.re.groups and match.group(1) is not None:
        start, end = match.span(1)
        offset = match.start(0)
        whole = match.group(0)
        return f"{whole[:start - offset]}{MASK}{whole[end - offset:]}"
    return MASK


def _parse_patterns(raw: str) -> list[str]:
    raw = raw.strip()
    if not raw:
        return []
    if raw.startswith("["):
        try:
            patterns = json.loads(raw)
        except ValueError:
            raise ResultError(INVALID_SETTING, f"{ENV_PATTERNS} is not a JSON list of strings.",
                              'Use one regex, or a JSON list like ["pin=(\\\\d+)"].') from None
        if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
            raise ResultError(INVALID_SETTING, f"{ENV_PATTERNS} is not a JSON list of strings.")
        return patterns
    return [raw]


@cache
def _redactor(keys: str, patterns: str) -> Redactor:
    return Redactor(keys.split(","), _parse_patterns(patterns))


def redactor() -> Redactor:
    """The redactor for the operator's current settings (environment)."""
    return _redactor(os.environ.get(ENV_KEYS, ""), os.environ.get(ENV_PATTERNS, ""))


def registering_redactor() -> Redactor:
    """The redactor the capture side finds secret values with: the operator's key words; not
    the extra patterns (they mask, they name nothing), so a pattern the read side refuses
    never stops a capture."""
    return _redactor(os.environ.get(ENV_KEYS, ""), "")

