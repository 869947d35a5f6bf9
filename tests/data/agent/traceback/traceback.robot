*** Settings ***
Documentation    A library keyword raising from its own code, and BuiltIn failing.
Library          Inventory.py

*** Test Cases ***
Library Raises
    Reserve    apples
    Reserve    pears

BuiltIn Fails
    Should Be Equal    one    two
