*** Settings ***
Documentation     The run stops in this suite's last test; its teardown fails after that,
...               on its own, and is not what stopped the run.
Suite Teardown    Fail    browser already closed

*** Test Cases ***
Checks Total
    Should Be Equal    41    42

Loses The Backend
    Fatal Error    backend unreachable: connection reset
