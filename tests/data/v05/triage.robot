*** Settings ***
Documentation     What the v0.5 views are for: repeated messages, one bad iteration in a
...               long loop, a very long message with a secret in it, nested keywords.

*** Variables ***
${POLL}           ${0}
${API_TOKEN}      tok-4f9a8c7e21d3b6a0

*** Test Cases ***
Export Job Finishes
    WHILE    ${POLL} < 60
        Poll Job
    END
    Fail    job 77f3a ended FAILED after ${POLL} polls

Import Every Row
    FOR    ${row}    IN RANGE    120
        Import Row    ${row}
    END

Page Shows Total
    ${chunk} =    Evaluate    "<span>item</span> " * 400
    # larger than the command line's budget, so even the CLI shows it cut around a match
    ${source} =    Catenate    SEPARATOR=\n    header line    ${{"<span>item</span> " * 4000}}    token ${API_TOKEN} used    ${{"<span>item</span> " * 4000}}    token ${API_TOKEN} again    ${{"<span>item</span> " * 4000}}    footer line
    Log    page source: ${source}
    Fail    total not shown: ${chunk}[0:1800]

*** Keywords ***
Poll Job
    ${n} =    Evaluate    ${POLL} + 1
    Set Test Variable    ${POLL}    ${n}
    Log    status of job 77f3a: RUNNING (poll ${n}, ${n}.5 s)
    Log    distinct note number ${n} for row-${n}-abc

Import Row
    [Arguments]    ${row}
    Log    importing row ${row}
    IF    ${row} == 87    Fail    Row 87: column 'price' is not a number
