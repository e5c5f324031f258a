-- The demo's sales as the warehouse holds them (investigator's demo-sales Parquet file).
select date, country, platform, channel, category, sessions, orders, revenue
from {{ source('demo', 'sales') }}
