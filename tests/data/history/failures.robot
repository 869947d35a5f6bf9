*** Settings ***
Documentation     Real failure texts of BuiltIn, Collections and String, each test run with two
...               different ${V} values: the two runs' messages differ only in volatile parts.
Library           Collections
Library           String
Library           OperatingSystem

*** Variables ***
${V}              1

*** Test Cases ***
Equal Numbers
    Should Be Equal As Numbers    ${V}.5    99.25

Equal Strings With Quotes
    Should Be Equal    order-${V}    'order-${V}0'

Contains
    Should Contain    ${{ ['a', 'b'] }}    item-${V}

Length
    Length Should Be    ${{ list(range(${V})) }}    ${V}7

List Value
    ${items}=    Create List    apple    pear
    List Should Contain Value    ${items}    plum-${V}

Dictionary Key
    ${d}=    Create Dictionary    a=1
    Dictionary Should Contain Key    ${d}    session-${V}

String Pattern
    Should Match Regexp    ticket ${V}    ^ID-\\d{4}$

Uuid And Time
    ${uuid}=    Evaluate    str(uuid.uuid4())    modules=uuid
    ${now}=    Get Time
    Fail    request ${uuid} failed at ${now} after ${V}.2 seconds

Temp File
    ${path}=    Evaluate    tempfile.mkdtemp()    modules=tempfile
    File Should Exist    ${path}/report-${V}.csv

Keyword Timeout
    [Timeout]    0.${V}5 s
    Sleep    0.3 s
