*** Settings ***
Documentation     Retries: a service polled with Wait Until Keyword Succeeds and Repeat Keyword.

*** Variables ***
${ATTEMPT}    ${0}

*** Test Cases ***
Order Service Comes Up
    Wait Until Keyword Succeeds    25x    1ms    Order Service Should Answer

Cache Warms Up
    Repeat Keyword    12 times    Warm One Cache Entry
    Should Be Equal    ${CACHE}    warm    cache is ${CACHE} after 12 warm-ups

*** Keywords ***
Order Service Should Answer
    ${n} =    Evaluate    ${ATTEMPT} + 1
    Set Test Variable    ${ATTEMPT}    ${n}
    ${ms} =    Evaluate    1000 + ${n} * 37
    Log    GET http://orders.internal:8080/health -> 503 in ${ms} ms
    Fail    GET /orders/health answered 503 Service Unavailable after ${ms} ms (attempt ${n})

Warm One Cache Entry
    Set Test Variable    ${CACHE}    cold
    Log    warming entry ${ATTEMPT}: miss
