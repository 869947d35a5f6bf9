*** Variables ***
${NIGHT}          1
${API_TOKEN}      pay-77-s3cr3t-token

*** Test Cases ***
Payment Accepted
    Run Keyword If    ${NIGHT} == 1    Fail    gateway timeout after 3000 ms (sent ${API_TOKEN})

Refund Issued
    Log    refunded
