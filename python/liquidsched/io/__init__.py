"""Reading and writing liquidsched's files: topologies, traffics, schedules."""
