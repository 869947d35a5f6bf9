"""A stand-in for the Browser library's Fill Text and Type Text (tests/test_known_secrets.py):
the same library name, argument order and message ("Fills the text 'x' in the given field.",
which does not name the field), without a browser to type into."""

from robot.api import logger


def fill_text(selector, txt, force=False):
    logger.info(f"Fills the text '{txt}' in the given field.")


def type_text(selector, txt, delay="0 s", clear=True):
    logger.info(f"Types the text '{txt}' in the given field.")
