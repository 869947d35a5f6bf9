*** Settings ***
Documentation     Setup and teardown failures.
Suite Setup       Connect To Database
Test Teardown     Clean Up Test Data

*** Test Cases ***
Reads Customers
    Log    reading customers

Reads Orders
    Log    reading orders

*** Keywords ***
Connect To Database
    Log    connecting to db.internal:5432
    Fail    Connection refused: db.internal:5432 after 3012 ms

Clean Up Test Data
    Log    cleaning up
