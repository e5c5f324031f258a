from investigator.front.cli import main

main()
