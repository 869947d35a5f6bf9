*** Settings ***
Documentation     A small web shop's API tests. Some fail on purpose, in the ways real runs fail.
Metadata          Environment    staging
Suite Setup       Connect To Shop    https://shop.example.test
Library           ShopApi.py
