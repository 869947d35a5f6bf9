*** Settings ***
Documentation     Long TRACE payloads: run with --loglevel TRACE; keywords take and return large values.

*** Test Cases ***
Transform Payloads
    FOR    ${i}    IN RANGE    30
        ${payload} =    Build Payload    ${i}
        ${out} =    Transform    ${payload}
    END
    Should Be Equal    ${out}    done    transform returned ${out}

*** Keywords ***
Build Payload
    [Arguments]    ${i}
    ${text} =    Evaluate    "record-${i};" * 1500
    RETURN    ${text}

Transform
    [Arguments]    ${payload}
    ${result} =    Evaluate    $payload.upper()[:9000]
    RETURN    ${result}
