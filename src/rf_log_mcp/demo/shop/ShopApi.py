"""A fake shop API for the example suite: deterministic, no network."""

from robot.api import logger
from robot.api.deco import keyword, library


@library(scope="GLOBAL")
class ShopApi:
    def __init__(self):
        self.base_url = None
        self.stock = {"apple": 12, "pear": 0, "plum": 5}

    @keyword
    def connect_to_shop(self, base_url):
        self.base_url = base_url
        logger.info(f"Connected to {base_url}")

    @keyword
    def post_login(self, user, password):
        logger.debug(f"POST {self.base_url}/login body={{'user': '{user}'}}")
        if user == "locked":
            logger.warn(f"Account {user} is locked; server answered 423")
            return 423
        status = 503 if user == "bob" else 200
        logger.info(f"HTTP {status} from /login")
        return status

    @keyword
    def stock_of(self, item):
        count = self.stock.get(item)
        logger.trace(f"stock lookup {item} -> {count}")
        if count is None:
            raise AssertionError(f"Unknown item '{item}'")
        return count
