"""Logs HTML messages the way libraries do, with real images (Pillow draws them).

The Browser library (robotframework-browser) downloads browsers when it is installed, which
this machine cannot do: its two screenshot messages are reproduced here exactly as its
source writes them (Browser/keywords/browser_control.py: ``_log_image_link`` and
``_embed_to_log``), with the PNG files it would write under ``browser/screenshot``.
"""

import base64
import io
import os

from PIL import Image, ImageDraw
from robot.api import logger
from robot.libraries.BuiltIn import BuiltIn


def _png(width, height, text):
    image = Image.new("RGB", (width, height), (240, 240, 250))
    ImageDraw.Draw(image).text((20, 20), text, fill=(200, 0, 0))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def browser_screenshot_as_file(width=2400, height=1400):
    """Browser's ``Take Screenshot`` with a file name: a link and an image, 800 px wide."""
    outdir = BuiltIn().get_variable_value("${OUTPUT DIR}")
    relative = "browser/screenshot/robotframework-browser-screenshot-1.png"
    os.makedirs(os.path.join(outdir, "browser", "screenshot"), exist_ok=True)
    with open(os.path.join(outdir, relative), "wb") as handle:
        handle.write(_png(int(width), int(height), "browser file screenshot"))
    logger.info(
        '</td></tr><tr><td colspan="3">'
        f'<a href="{relative}"><img src="{relative}" width="800px"></a>',
        html=True,
    )


def browser_screenshot_embedded(width=640, height=360):
    """Browser's ``Take Screenshot    EMBED``: base64 in the message, 900 px wide."""
    encoded = base64.b64encode(_png(int(width), int(height), "embedded screenshot"))
    logger.info(
        '</td></tr><tr><td colspan="3">'
        '<img alt="screenshot" class="robot-seleniumlibrary-screenshot" '
        f'src="data:image/png;base64,{encoded.decode()}" width="900px">',
        html=True,
    )
