from gpupool.cli import main

raise SystemExit(main())
