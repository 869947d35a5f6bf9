"""A deterministic stand-in for an HTTP client: no network, realistic logging."""

from robot.api import logger
from robot.api.deco import keyword, library

_ROUTES = {("POST", "/login"): {"alice": 200, "bob": 503, "carol": 200}}


@library(scope="GLOBAL")
class HttpLike:
    def __init__(self) -> None:
        self.base_url = "https://staging.shop.example"
        self.status = None

    @keyword
    def post(self, path: str, user: str, password: str) -> int:
        logger.info(f"POST {self.base_url}{path} user={user} password={password}")
        logger.debug(f"Request headers: {{'Authorization': 'Bearer tok-{user}-92f1c0', "
                     f"'Accept': 'application/json'}}")
        self.status = _ROUTES[("POST", path)].get(user, 404)
        logger.info(f"HTTP {self.status} from {path}")
        return self.status

    @keyword
    def status_should_be(self, expected: int) -> None:
        if self.status != int(expected):
            raise AssertionError(f"Expected HTTP {expected} but got {self.status}")

    @keyword
    def price_of(self, item: str) -> float:
        prices = {"apple": 1.2, "pear": 0.8, "plum": 2.5}
        logger.trace(f"price lookup {item}")
        if item not in prices:
            raise AssertionError(f"Unknown item '{item}'")
        return prices[item]
