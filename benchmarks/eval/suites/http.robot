*** Settings ***
Documentation     HTTP-like error bodies: large JSON logged and quoted in failures.
Library           Collections

*** Test Cases ***
Create Invoice
    ${body} =    Make Body    invoice    60
    Log    POST /api/invoices response: ${body}
    Fail    HTTPError: 500 Server Error: Internal Server Error for url: https://api.example.test/api/invoices\nbody: ${body}

Fetch Report
    ${body} =    Make Body    report    20
    Log    GET /api/reports/7 response: ${body}
    Should Contain    ${body}    "status": "ready"    msg=report 7 not ready: ${body}

*** Keywords ***
Make Body
    [Arguments]    ${kind}    ${items}
    ${lines} =    Evaluate    [{"id": i, "kind": "${kind}", "status": "pending", "detail": "field %d failed validation: expected decimal, got string" % i} for i in range(${items})]
    ${body} =    Evaluate    __import__('json').dumps({"error": "validation failed", "items": $lines}, indent=1)
    RETURN    ${body}
