*** Settings ***
Library    no.such.Module

*** Test Cases ***
A Library Two Suites Failed To Import
    no.such.Module.Run

A Typo In A Prefix
    BuiltIn.Lgo    beside a failed import
