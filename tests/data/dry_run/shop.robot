*** Settings ***
Documentation     A suite whose tests robot --dryrun checks: the data is valid but for
...               one missing keyword; run, one test fails on its values.
Resource          steps.resource
Suite Setup       Log    opening the shop
Test Teardown     Log    done

*** Variables ***
${TOTAL}          10

*** Test Cases ***
Checkout
    Add Items    3
    Should Be Equal As Integers    ${TOTAL}    11

Browse
    FOR    ${page}    IN RANGE    2
        Log    page ${page}
    END
    IF    ${TOTAL} > 5
        Log    big
    ELSE
        Log    small
    END

Broken Data
    Add Items    1
    No Such Keyword    x

Returns Early
    Leave Early
