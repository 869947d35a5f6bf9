*** Settings ***
Library     NoSuchWebLibrary
Resource    missing.resource

*** Test Cases ***
Prefixed
    NoSuchWebLibrary.Open Page    https://shop.example

Unprefixed
    Open Page    https://shop.example

Missing Variable
    Log    ${BASE_URL}

Ordinary
    Old Style Keyword

*** Keywords ***
Old Style Keyword
    Fail    ordinary failure
    [Return]    nothing
