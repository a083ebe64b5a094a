"""Responses page: a search that matches nothing is a message, not an exception."""
from apptest import board, texts


def test_a_search_matching_nothing_says_so(board_dump):
    at = board(board_dump, page="responses", step="1", q="zzz-no-such-text")
    assert not at.exception, at.exception
    assert "0 of 8 samples" in texts(at) and "No sample matches the search." in texts(at)
