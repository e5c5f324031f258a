"""Where the data lives: request validation and the `DataSource` implementations."""
