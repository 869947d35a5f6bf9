*** Settings ***
Documentation     The Browser library's screenshot messages (Shots.py), without a browser.
Library           Shots.py

*** Test Cases ***
Checkout Page
    Browser Screenshot As File
    Browser Screenshot Embedded
    Fail    checkout page did not load
