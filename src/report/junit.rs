//! JUnit XML of the gate's cases, so that a CI system shows each compared target × declared
//! metric as a test: a `failure` for each case the gate fails, the verdict line as its output.

use super::gate::GateCase;

/// The JUnit XML of `cases`: one suite named `suite`, one testcase per case (its class the
/// workload), `\n` line ends.
pub fn render_junit(suite: &str, cases: &[GateCase]) -> String {
    let failures = cases.iter().filter(|c| c.failure.is_some()).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let counts = format!("tests=\"{}\" failures=\"{failures}\"", cases.len());
    out.push_str(&format!("<testsuites name=\"mongobench\" {counts}>\n"));
    out.push_str(&format!(
        "  <testsuite name=\"{}\" {counts}>\n",
        escape(suite)
    ));
    for case in cases {
        out.push_str(&format!(
            "    <testcase classname=\"{}\" name=\"{}\">\n",
            escape(&case.workload),
            escape(&case.name)
        ));
        if let Some(f) = &case.failure {
            out.push_str(&format!(
                "      <failure type=\"{}\" message=\"{}\">{}</failure>\n",
                f.flag,
                escape(&f.message),
                escape(&case.verdict_line)
            ));
        }
        out.push_str(&format!(
            "      <system-out>{}</system-out>\n    </testcase>\n",
            escape(&case.verdict_line)
        ));
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// Text as XML 1.0 character data or an attribute value: the five markup characters as
/// entities, control characters XML cannot hold dropped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::gate::Failure;

    fn case(name: &str, failure: Option<Failure>) -> GateCase {
        GateCase {
            workload: "flights/v1".into(),
            name: name.into(),
            verdict_line: "slower -12.0% [-15.1%, -8.8%] (95%)".into(),
            failure,
        }
    }

    #[test]
    fn one_testcase_per_case_with_failures_and_their_output() {
        let cases = [
            case(
                "n2/1M/b vs a throughput",
                Some(Failure {
                    flag: "fail-on-slower",
                    message: "slower by more than 5% (--fail-on-slower 5)".into(),
                }),
            ),
            case("n2/1M/c vs a throughput", None),
        ];
        assert_eq!(
            render_junit("comparison vs a", &cases),
            r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="mongobench" tests="2" failures="1">
  <testsuite name="comparison vs a" tests="2" failures="1">
    <testcase classname="flights/v1" name="n2/1M/b vs a throughput">
      <failure type="fail-on-slower" message="slower by more than 5% (--fail-on-slower 5)">slower -12.0% [-15.1%, -8.8%] (95%)</failure>
      <system-out>slower -12.0% [-15.1%, -8.8%] (95%)</system-out>
    </testcase>
    <testcase classname="flights/v1" name="n2/1M/c vs a throughput">
      <system-out>slower -12.0% [-15.1%, -8.8%] (95%)</system-out>
    </testcase>
  </testsuite>
</testsuites>
"#
        );
    }

    #[test]
    fn markup_and_control_characters_are_escaped_or_dropped() {
        assert_eq!(
            escape("a<b>&\"c\" 'd'\u{1}\u{7}\tz"),
            "a&lt;b&gt;&amp;&quot;c&quot; &apos;d&apos;\tz"
        );
        let xml = render_junit("s", &[case("x<y & \"z\"", None)]);
        assert!(xml.contains("name=\"x&lt;y &amp; &quot;z&quot;\""), "{xml}");
    }
}
