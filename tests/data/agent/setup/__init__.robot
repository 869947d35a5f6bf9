*** Settings ***
Suite Setup    Connect To Database

*** Keywords ***
Connect To Database
    Log    connecting to db.example:5432
    Open Connection    db.example    5432

Open Connection
    [Arguments]    ${host}    ${port}
    Fail    Connection refused: ${host}:${port}
