*** Settings ***
Documentation     Repeated messages: a job polled until it ends badly.

*** Variables ***
${POLL}    ${0}

*** Test Cases ***
Export Job Finishes
    WHILE    ${POLL} < 150
        Poll Job
    END
    Fail    job 77f3a ended FAILED after ${POLL} polls: disk quota exceeded on /exports

*** Keywords ***
Poll Job
    ${n} =    Evaluate    ${POLL} + 1
    Set Test Variable    ${POLL}    ${n}
    ${elapsed} =    Evaluate    round(${n} * 0.2, 1)
    Log    status of job 77f3a: RUNNING (poll ${n}, ${elapsed} s)
    Log    heartbeat from worker-3 at poll ${n}
