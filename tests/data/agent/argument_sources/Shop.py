"""Library keywords that log a request and its response and return the response, as
RequestsLibrary's ``GET On Session`` does: the check that fails on the response is another
step, and the response's body, the evidence, is what this step logged."""

from robot.api import logger


class Response:
    def __init__(self, status_code, body):
        self.status_code = status_code
        self.body = body

    def __str__(self):
        return f"<Response [{self.status_code}]>"

    __repr__ = __str__


def get_order(order_id):
    url = f"http://shop.local/api/orders/{order_id}"
    logger.info(f"GET Request : url={url} \n path_url=/api/orders/{order_id} \n body=None \n ")
    body = '{"error": "database is locked", "retry_after": 5}'
    logger.info(f"GET Response : url={url} \n status=500, reason=Internal Server Error \n "
                f"body={body} \n ")
    return Response(500, body)
