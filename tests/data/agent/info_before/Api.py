"""A library keyword that logs its request and response before failing, as RequestsLibrary's
do: the response's body is the evidence its failure message leaves out."""

from robot.api import logger

URL = "http://shop.local/api/orders/"


def get_order(order_id):
    logger.info("connecting to shop.local")
    logger.info("using the tenant of the session")
    # RequestsLibrary 0.9's shapes (RequestsLibrary/log.py): a line each, " \n " between them
    logger.info(f"GET Request : url={URL}{order_id} \n path_url=/api/orders/{order_id} \n "
                f"headers={{'User-Agent': 'python-requests/2.32.3', 'Accept': '*/*'}} \n "
                "body=None \n ")
    logger.info('<a href="har/order.har">the HAR file</a>', html=True)
    logger.debug("a debug line")
    logger.info(f"GET Response : url={URL}{order_id} \n status=404, reason=Not Found \n "
                "headers={'Server': 'nginx', 'Content-Type': 'application/json'} \n "
                f'body={{"error": "order {order_id} belongs to another tenant",'
                ' "token": "password=s3cr3t-Value"} \n ')
    raise AssertionError(f"HTTPError: 404 Client Error: Not Found for url: {URL}{order_id}")


def log_then_pass():
    logger.info("a passing keyword's line")
