"""Passwords commands take as arguments on a logged command line, not as an option's value
(that is ``secret_shapes``' ``PASSWORD_OPTIONS``): shared by both sides, through ``masking``.
"""

from __future__ import annotations

from .secret_shapes import CURL_REACH, MASK, lazy_pattern

# Passwords some commands take as an argument, not as an option's value (a test logs the
# command it runs): Samba's ``-U user%password`` (smbclient, rpcclient, net, ...), ``htpasswd
# -b[n] [file] user password``, ``rabbitmqctl add_user|change_password user password``,
# Windows' ``net use \\srv\share password`` and ``net user name password``, ``mysqladmin
# ... password new``, Vault's ``vault login token``, and a package manager's token or password
# it is given to keep (``npm config set //registry/:_authToken x``, ``yarn config set
# npmAuthToken x``, ``poetry config pypi-token.pypi x``, ``poetry config http-basic.repo user
# x``). Read from the command's name over its words on its line, not by a pattern of each shape.
_ARGUMENT_COMMANDS = lazy_pattern(
    r"(?i)(?<![\w.-])(smbclient|rpcclient|smbcacls|smbget|smbtree|wbinfo|samba-tool|pdbedit"
    r"|net|htpasswd|rabbitmqctl|mysqladmin|vault|aws|npm|yarn|pnpm|poetry)(?![\w-])")
# a word (its span: inside its quotes), or what ends the command
_COMMAND_WORDS = lazy_pattern(r"""'([^'\n]*)'|"([^"\n]*)"|([^\s'";|&]+)|([;|&\n])""")
_SAMBA_USER_OPTIONS = ("-U", "--user", "--username")
# the options of htpasswd (its cost, its rounds) and rabbitmqctl that take a value apart
_VALUED_OPTIONS = {"htpasswd": ("-C", "-r"), "rabbitmqctl": ("-n", "-t", "-l", "--node", "--timeout"),
                   "net": (), "vault": (), "aws": ("--profile", "--region", "--output"),
                   "npm": ("-L", "--location"), "pnpm": ("--location",), "yarn": (), "poetry": (),
                   "mysqladmin": ("-u", "-h", "-P", "-S", "--user", "--host", "--port", "--socket")}


# what ``aws configure set NAME VALUE`` sets that is a credential (a profile's too:
# ``profile.ci.aws_secret_access_key``)
_AWS_SECRETS = ("aws_secret_access_key", "aws_session_token")
# what a package manager's ``config set NAME VALUE`` sets that is a credential (npm's, pnpm's
# ``//registry/:_authToken``, ``_auth``, ``_password``; Yarn's ``npmAuthToken``,
# ``npmAuthIdent``)
_PACKAGE_SECRETS = ("_authtoken", ":_auth", ":_password", "npmauthtoken", "npmauthident")


# a shell's or cmd's variable standing for the password (``$NPM_TOKEN``, ``%PW%``), as a
# reference after a secret's name is (``secret_names.no_value_at``): capitals only
_SHELL_REFERENCE = lazy_pattern(r"\$\{?[A-Z_][A-Z0-9_]*\}?|%[A-Z_][A-Z0-9_]*%")


def _words_after(text: str, at: int) -> list[tuple[int, int, str]]:
    """The words of the command line from ``at`` (within CURL_REACH characters), each as its
    span and text, to the end of the command (its line, or ``;``, ``|``, ``&``)."""
    words = []
    for word in _COMMAND_WORDS().finditer(text, at, min(len(text), at + CURL_REACH)):
        if word.lastindex == 4:
            break
        words.append((word.start(word.lastindex), word.end(word.lastindex), word[word.lastindex]))
    return words


def _samba_password(words: list[tuple[int, int, str]]) -> tuple[int, int] | None:
    """Samba's ``-U user%password`` (``-Uuser%x``, ``--user=user%x``): the password's span."""
    for index, (start, end, word) in enumerate(words):
        if word in _SAMBA_USER_OPTIONS and index + 1 < len(words):
            start, end, word = words[index + 1]
        elif word.startswith("-U") and not word.startswith("-U="):
            start, word = start + 2, word[2:]
        elif word.startswith(("--user=", "--username=")):
            cut = word.index("=") + 1
            start, word = start + cut, word[cut:]
        else:
            continue
        if "%" in word[1:]:
            return start + word.index("%", 1) + 1, end
    return None


def _positional_password(words: list[tuple[int, int, str]], command: str) -> tuple[int, int] | None:
    """htpasswd's, rabbitmqctl's and Windows net's password argument: its span, or None."""
    flags, positional, skip = "", [], False
    for start, end, word in words:
        if skip:
            skip = False
        elif word.startswith("-") and len(word) > 1 and command != "net":
            flags += word.lstrip("-")
            skip = word in _VALUED_OPTIONS[command]  # the option's value comes next
        elif not (command == "net" and word.startswith("/")):
            positional.append((start, end, word))
    names = [word.lower() for _, _, word in positional]
    if command == "htpasswd":
        index = (1 if "n" in flags else 2) if "b" in flags else None
    elif command == "rabbitmqctl":
        found = [n for n, name in enumerate(names) if name in ("add_user", "change_password")]
        index = found[0] + 2 if found else None
    elif command == "mysqladmin":  # mysqladmin [options] password new
        index = names.index("password") + 1 if "password" in names else None
    elif command == "vault":  # vault login token (not -, not key=value of another method)
        index = 1 if names[:1] == ["login"] and len(names) > 1 and names[1] != "-" \
            and "=" not in names[1] else None
    elif command == "aws":  # aws configure set aws_secret_access_key x (or a session token)
        index = 3 if names[:2] == ["configure", "set"] and len(names) > 2 \
            and names[2].rpartition(".")[2] in _AWS_SECRETS else None
    elif command in ("npm", "pnpm", "yarn"):  # npm config set //registry/:_authToken x
        index = 3 if names[:2] == ["config", "set"] and len(names) > 2 \
            and names[2].endswith(_PACKAGE_SECRETS) else None
    elif command == "poetry":  # poetry config pypi-token.pypi x; http-basic.repo user x
        setting = names[1] if names[:1] == ["config"] and len(names) > 1 else ""
        index = 2 if setting.startswith("pypi-token.") else 3 if setting.startswith("http-basic.") else None
    elif names[:1] == ["use"]:  # net use [device] \\server\share password
        found = [n for n, name in enumerate(names) if name.startswith("\\\\")]
        index = found[0] + 1 if found else None
    else:  # net user name password
        index = 2 if names[:1] == ["user"] else None
    if index is None or index >= len(positional) or positional[index][2] == "*" \
            or _SHELL_REFERENCE().fullmatch(positional[index][2]):
        return None
    return positional[index][:2]


def argument_password_spans(text: str) -> list[tuple[int, int]]:
    """Where the passwords commands take as arguments are in ``text`` (their spans)."""
    if not ("%" in text or "\\\\" in text or "htpasswd" in text or "rabbitmqctl" in text
            or "et user " in text or "ET USER " in text or "et User " in text
            or "mysqladmin" in text or "vault login" in text or "configure set" in text
            or "config set" in text or "poetry config" in text):
        return []  # most messages: a dozen substring tests (~0.5 µs), run by the writer on each
    spans = []
    for command in _ARGUMENT_COMMANDS().finditer(text):
        name = command[1].lower()
        words = _words_after(text, command.end())
        found = _samba_password(words) if name not in _VALUED_OPTIONS or name == "net" else None
        if found is None and name in _VALUED_OPTIONS:
            found = _positional_password(words, name)
        if found is not None and found[0] < found[1] and (not spans or found[0] >= spans[-1][1]):
            spans.append(found)  # once, in order: two commands may find one (net ... smbclient)
    return spans


def argument_passwords(text: str) -> list[str]:
    return [text[start:end] for start, end in argument_password_spans(text)]


def masked_argument_passwords(text: str) -> tuple[str, int]:
    """``text`` with the passwords commands take as arguments masked, and how many."""
    masked = 0
    for start, end in reversed(argument_password_spans(text)):
        if text[start:end] != MASK:
            text, masked = f"{text[:start]}{MASK}{text[end:]}", masked + 1
    return text, masked
