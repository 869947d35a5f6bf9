*** Settings ***
Resource    shared.resource

*** Test Cases ***
Shared
    Query Database    SELECT 1

Shared Again
    Query Database    SELECT 2
