"""The numbers a caller may ask for (read side, boundary): token budgets and page sizes.
Nothing is imported here, so the command line's parser checks them without loading a view."""

DEFAULT_BUDGET = 4000  # tokens per call unless the caller asks for another
MIN_BUDGET = 500
MAX_BUDGET = 50_000
DEFAULT_PAGE = 25  # items per page unless the caller asks for another
MAX_PAGE = 200
