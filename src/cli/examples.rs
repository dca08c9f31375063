//! The examples each subcommand's long help (`--help`) ends with.

pub const CRD: &str = "\
Examples:
  mongobench crd | kubectl apply --server-side -f -
  mongobench crd > manifests/crd.yaml";

pub const VALIDATE: &str = "\
Examples:
  mongobench validate -f examples/quickstart.yaml
  mongobench validate -f a.yaml -f b.yaml
  cat benchmark.yaml | mongobench validate -f -";

pub const RUN: &str = "\
Examples:
  # A quick comparison without a manifest (YCSB workload A, 60 s cells, 16 workers)
  mongobench run --workload ycsb-a --duration 60s --workers 16 \\
      --target a=mongodb://127.0.0.1:27017/ --target b=mongodb://127.0.0.1:27018/ --out results
  # The manifest that quick run stands for, to edit or apply
  mongobench run --workload ycsb-a --duration 60s --target a=mongodb://h:27017/ --dry-run
  # A manifest's benchmark against deployments you run
  mongobench run -f examples/quickstart.yaml \\
      --target postgres=mongodb://127.0.0.1:27018/ \\
      --target wiredtiger=mongodb://127.0.0.1:27020/ --out results
  # In CI: exit 3 if a target is significantly slower than the baseline by more than 5 %
  mongobench run -f bench.yaml --target base=mongodb://h:27017/ --target new=mongodb://g:27017/ \\
      --out results --fail-on-slower 5 --junit results/junit.xml";

pub const OPERATOR: &str = "\
Examples:
  mongobench operator
  mongobench operator --namespace bench --leader-election
  mongobench operator --kubeconfig ~/.kube/lab --context lab --listen 127.0.0.1:8080";

pub const REPORT: &str = "\
Examples:
  mongobench report quickstart
  mongobench report quickstart -n perf -o html > report.html
  mongobench report --dir results -o markdown
  mongobench report --dir results --baseline b -o csv
  mongobench report --dir results -o json > comparison.json
  mongobench report --dir results --fail-on-slower 5 --fail-on-inconclusive --junit junit.xml";

pub const PLAN: &str = "\
Examples:
  mongobench plan quickstart --mde 3
  mongobench plan --dir results --mde 5 --baseline a";

pub const GET: &str = "\
Examples:
  mongobench get
  mongobench get quickstart -o wide
  mongobench get -A -o yaml
  mongobench get quickstart -w";

pub const VERIFY: &str = "\
Examples:
  mongobench verify --dir results
  mongobench verify --dir results --workload orders.yaml";

pub const IMPORT: &str = "\
Examples:
  mongobench import plgm --collections collections.json --queries queries.json --out workload.yaml";

pub const CANARY: &str = "\
Examples:
  mongobench canary
  mongobench canary --serve 10.0.0.5 --port 27117";

pub const COMPLETIONS: &str = "\
Examples:
  mongobench completions bash > /etc/bash_completion.d/mongobench
  mongobench completions zsh > \"${fpath[1]}/_mongobench\"
  mongobench completions fish > ~/.config/fish/completions/mongobench.fish";
