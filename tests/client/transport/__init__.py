"""Tests of the REST transport: the HTTP/1.1 client and the REST calls made through it."""
