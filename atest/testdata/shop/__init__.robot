*** Settings ***
Documentation     A web shop's API tests: what a team's nightly run looks like when it fails.
Suite Setup       Log    shop suite starts against staging
