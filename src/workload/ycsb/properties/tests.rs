use super::*;

fn raw(pairs: &[(&str, &str)]) -> RawProperties {
    let mut r = RawProperties::new();
    for (k, v) in pairs {
        r.set(*k, *v);
    }
    r
}

fn props(pairs: &[(&str, &str)]) -> Result<Properties, PropertyError> {
    Properties::from_raw(&raw(pairs))
}

#[test]
fn defaults_follow_the_spec_table() {
    let p = props(&[("recordcount", "500")]).expect("valid");
    assert_eq!(p.workload, "custom");
    assert_eq!(p.compat, Compat::V0_17_0);
    assert_eq!((p.operation_count, p.headroom_operation_count), (0, 0));
    assert_eq!(
        (p.insert_start, p.insert_count, p.insert_count_explicit),
        (0, 500, false)
    );
    assert!(p.hashed_keys);
    assert_eq!(p.zero_padding, 1);
    assert_eq!(
        (p.table.as_str(), p.database.as_str()),
        ("usertable", "ycsb")
    );
    assert_eq!((p.field_count, p.field_name_prefix.as_str()), (10, "field"));
    assert_eq!(p.field_lengths, FieldLengths::Constant(100));
    assert!(p.read_all_fields && !p.write_all_fields && !p.data_integrity);
    assert_eq!(
        p.proportions,
        Proportions {
            read: 0.95,
            update: 0.05,
            insert: 0.0,
            scan: 0.0,
            read_modify_write: 0.0
        }
    );
    assert_eq!(p.request_distribution, RequestDistribution::Uniform);
    assert_eq!((p.min_scan_length, p.max_scan_length), (1, 1000));
    assert_eq!(p.scan_length_distribution, ScanLengthDistribution::Uniform);
    assert_eq!(
        (p.insertion_retry_limit, p.insertion_retry_interval),
        (0, 3)
    );
    assert_eq!((p.batch_size, p.upsert, p.thread_count), (1, false, 1));
    assert_eq!(p.zipfian_mode, ZipfianMode::Ycsb);
    assert_eq!(p.field_names()[9], "field9");
}

#[test]
fn a_zipfian_range_that_dwarfs_the_keys_is_refused() {
    // Found by fuzzing: 10^19 operations with 5 % inserts over 1000 records; every scan
    // drew keys until one existed, about 10^15 draws each.
    let text = "# YCSB core wys.\n\
# Same keys and values as YC0SB .17.0's workloads/workloade. Grows the data set.\n\
recordcount=1000\n\
operationcount=10000000000000000000\n\
workload=site.ycsb.workloads.CoreWorkload\n\
readallfields=true\n\
readproportion=0\n\
updateproport]on=0\n\
scanproportion=0.95\n\
insertproportion=0.05\n\
requestdistribution=zipfian\n\
sc E: shortm\n\
";
    let raw = RawProperties::layered(&[("fuzz", text)], &[]).unwrap();
    let e = Properties::from_raw(&raw).unwrap_err().to_string();
    assert!(
        e.starts_with("property operationcount: operationcount × insertproportion × 2 = "),
        "{e}"
    );
    assert!(
        e.contains("more than 1000000 times the 1000 loaded keys"),
        "{e}"
    );
    // The headroom a run of a million operations needs is fine.
    let raw = RawProperties::layered(
        &[(
            "e",
            "recordcount=1000\noperationcount=1000000\ninsertproportion=0.05\n\
                     readproportion=0.95\nrequestdistribution=zipfian\n",
        )],
        &[],
    )
    .unwrap();
    assert_eq!(
        Properties::from_raw(&raw).unwrap().expected_new_keys(),
        100_000
    );
}

#[test]
fn presets_set_the_spec_columns() {
    let expect = [
        ("a", [0.5, 0.5, 0.0, 0.0, 0.0], RequestDistribution::Zipfian),
        (
            "b",
            [0.95, 0.05, 0.0, 0.0, 0.0],
            RequestDistribution::Zipfian,
        ),
        ("c", [1.0, 0.0, 0.0, 0.0, 0.0], RequestDistribution::Zipfian),
        (
            "d",
            [0.95, 0.0, 0.05, 0.0, 0.0],
            RequestDistribution::Latest,
        ),
        (
            "e",
            [0.0, 0.0, 0.05, 0.95, 0.0],
            RequestDistribution::Zipfian,
        ),
        ("f", [0.5, 0.0, 0.0, 0.0, 0.5], RequestDistribution::Zipfian),
    ];
    for (name, mix, dist) in expect {
        let p = Properties::preset(name).expect("preset parses");
        assert_eq!(p.workload, format!("workload{name}"));
        let got = p.proportions;
        assert_eq!(
            [
                got.read,
                got.update,
                got.insert,
                got.scan,
                got.read_modify_write
            ],
            mix,
            "workload {name}"
        );
        assert_eq!(p.request_distribution, dist, "workload {name}");
        assert_eq!((p.record_count, p.operation_count), (1000, 1000));
        assert!(p.read_all_fields);
    }
    let e = Properties::preset("workloadE").expect("case-insensitive");
    assert_eq!(e.max_scan_length, 100);
    assert_eq!(e.expected_new_keys(), 100);
    // A time-bound run: operationcount 0, the headroom of the file's 1000 operations kept.
    let mut raw = RawProperties::preset("e").unwrap();
    raw.set("operationcount", "0");
    assert_eq!(Properties::from_raw(&raw).unwrap().expected_new_keys(), 0);
    raw.set("mongobench.headroom.operationcount", "1000");
    let timed = Properties::from_raw(&raw).unwrap();
    assert_eq!((timed.operation_count, timed.expected_new_keys()), (0, 100));
    assert!(matches!(
        Properties::preset("g"),
        Err(PropertyError::UnknownPreset { .. })
    ));
}

#[test]
fn proportions_drop_non_positive_and_normalise() {
    // Only insertproportion=1 set: the 0.95/0.05 defaults stay (§2).
    let p = props(&[
        ("recordcount", "10"),
        ("insertproportion", "1"),
        ("scanproportion", "-3"),
    ])
    .expect("valid");
    let n = p.proportions.normalised();
    assert!((n[0] - 0.95 / 2.0).abs() < 1e-15);
    assert!((n[1] - 0.05 / 2.0).abs() < 1e-15);
    assert!((n[2] - 0.5).abs() < 1e-15);
    assert_eq!(n[3], 0.0);
    let none = props(&[
        ("recordcount", "10"),
        ("readproportion", "0"),
        ("updateproportion", "-1"),
    ]);
    assert_eq!(none, Err(PropertyError::NoOperation));
}

#[test]
fn errors_name_the_property() {
    let cases: [(&[(&str, &str)], &str); 12] = [
        (&[], "recordcount"),
        (&[("recordcount", "0")], "recordcount"),
        (&[("recordcount", "x")], "recordcount"),
        (
            &[("recordcount", "10"), ("readproportion", "lots")],
            "readproportion",
        ),
        (
            &[("recordcount", "10"), ("requestdistribution", "pareto")],
            "requestdistribution",
        ),
        (&[("recordcount", "10"), ("fieldcount", "0")], "fieldcount"),
        (
            &[("recordcount", "10"), ("fieldlengthdistribution", "normal")],
            "fieldlengthdistribution",
        ),
        (
            &[("recordcount", "10"), ("scanlengthdistribution", "latest")],
            "scanlengthdistribution",
        ),
        (
            &[
                ("recordcount", "10"),
                ("minscanlength", "5"),
                ("maxscanlength", "4"),
            ],
            "maxscanlength",
        ),
        (
            &[("recordcount", "10"), ("readallfields", "yes")],
            "readallfields",
        ),
        (
            &[
                ("recordcount", "10"),
                ("workload", "site.ycsb.workloads.TimeSeriesWorkload"),
            ],
            "workload",
        ),
        (
            &[("recordcount", "10"), ("mongodb.url", "postgres://x")],
            "mongodb.url",
        ),
    ];
    for (pairs, property) in cases {
        let err = props(pairs).expect_err(property);
        let text = err.to_string();
        assert!(text.contains(property), "{text:?} should name {property}");
    }
}

#[test]
fn insert_range_is_checked_like_ycsb() {
    let err = props(&[
        ("recordcount", "100"),
        ("insertstart", "50"),
        ("insertcount", "60"),
    ]);
    assert!(matches!(
        err,
        Err(PropertyError::InsertRange {
            insertstart: 50,
            insertcount: 60,
            recordcount: 100
        })
    ));
    let err = err.unwrap_err().to_string();
    assert!(err.starts_with("Invalid combination of insertstart, insertcount and recordcount"));
    let p = props(&[("recordcount", "100"), ("insertstart", "50")]).expect("valid");
    assert_eq!((p.insert_count, p.load_operation_count()), (50, 100));
    let p = props(&[
        ("recordcount", "100"),
        ("insertstart", "50"),
        ("insertcount", "20"),
    ])
    .expect("valid");
    assert_eq!(p.load_operation_count(), 20);
}

#[test]
fn conflicting_combinations_are_refused() {
    let di = props(&[
        ("recordcount", "10"),
        ("dataintegrity", "true"),
        ("fieldlengthdistribution", "uniform"),
    ]);
    assert!(matches!(
        di,
        Err(PropertyError::Conflict {
            property: "dataintegrity",
            ..
        })
    ));
    let up = props(&[
        ("recordcount", "10"),
        ("mongodb.upsert", "true"),
        ("batchsize", "10"),
    ]);
    assert!(matches!(
        up,
        Err(PropertyError::Conflict {
            property: "mongodb.upsert",
            ..
        })
    ));
    let up_master = props(&[
        ("recordcount", "10"),
        ("mongodb.upsert", "true"),
        ("batchsize", "10"),
        ("mongobench.compat", "master"),
    ]);
    assert!(up_master.is_ok());
    let hs = props(&[
        ("recordcount", "10"),
        ("requestdistribution", "hotspot"),
        ("hotspotdatafraction", "1.5"),
    ]);
    assert!(matches!(
        hs,
        Err(PropertyError::Conflict {
            property: "hotspotdatafraction",
            ..
        })
    ));
}

#[test]
fn records_above_the_document_limit_are_refused() {
    // Default record: 4 + (1 + 4 + 4 + 24 + 1) + 10 × (1 + 6 + 1 + 4 + 1 + 100) + 1 with
    // the `_id` counted at 20 digits: 1169 bytes, one more than a 19-digit key's 1168.
    assert_eq!(
        max_record_bytes(10, "field", &FieldLengths::Constant(100), 1),
        1169
    );
    let fits = 16 * 1024 * 1024 / 10 - 100;
    assert!(props(&[("recordcount", "10"), ("fieldlength", &fits.to_string())]).is_ok());
    let err = props(&[("recordcount", "10"), ("fieldlength", "1677722")]).unwrap_err();
    assert!(
        matches!(
            err,
            PropertyError::Conflict {
                property: "fieldlength",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("16 MiB"), "{err}");
    let h = FieldLengths::Histogram(FieldLengthHistogram {
        block_size: 10,
        buckets: vec![1, 0, 3, 0],
    });
    assert_eq!(h.max(), 30);
}

#[test]
fn out_of_range_hotspot_fractions_become_zero_with_a_warning() {
    let p = props(&[
        ("recordcount", "10"),
        ("requestdistribution", "hotspot"),
        ("hotspotopnfraction", "2"),
    ])
    .expect("valid: opn fraction 0 draws only from the cold set");
    assert_eq!(
        p.request_distribution,
        RequestDistribution::Hotspot {
            data_fraction: 0.2,
            opn_fraction: 0.0
        }
    );
    assert_eq!(p.warnings.len(), 1);
}

#[test]
fn database_comes_from_the_url_unless_defaulted_empty_or_admin() {
    let v17 = Compat::V0_17_0;
    assert_eq!(database_for_url(None, v17).unwrap(), "ycsb");
    assert_eq!(
        database_for_url(Some("mongodb://h:1/bench?w=1"), v17).unwrap(),
        "bench"
    );
    assert_eq!(
        database_for_url(Some("mongodb://u:p@h1,h2/"), v17).unwrap(),
        "ycsb"
    );
    assert_eq!(
        database_for_url(Some("mongodb://h/admin"), v17).unwrap(),
        "ycsb"
    );
    assert_eq!(database_for_url(Some("mongodb://h"), v17).unwrap(), "ycsb");
    assert!(database_for_url(Some("mongodb+srv://c.example/x"), v17).is_err());
    assert_eq!(
        database_for_url(Some("mongodb+srv://c.example/x"), Compat::Master).unwrap(),
        "x"
    );
}

#[test]
fn several_pods_load_their_slices() {
    let pod = |i: &str| {
        props(&[
            ("recordcount", "10"),
            ("mongobench.client.count", "3"),
            ("mongobench.client.index", i),
        ])
        .unwrap()
        .load_range()
    };
    assert_eq!([pod("0"), pod("1"), pod("2")], [(0, 4), (4, 3), (7, 3)]);
    let explicit = props(&[
        ("recordcount", "10"),
        ("mongobench.client.count", "3"),
        ("insertstart", "2"),
        ("insertcount", "5"),
    ]);
    assert_eq!(explicit.unwrap().load_range(), (2, 5));
}

#[test]
fn removed_properties_are_refused_with_what_replaced_them() {
    let err = props(&[
        ("recordcount", "10"),
        ("mongobench.txninsert.start", "auto"),
    ])
    .unwrap_err();
    assert!(matches!(
        err,
        PropertyError::Removed {
            property: "mongobench.txninsert.start",
            ..
        }
    ));
    assert!(
        err.to_string()
            .starts_with("property mongobench.txninsert.start is not supported: the runner"),
        "{err}"
    );
}

#[test]
fn histogram_file_format() {
    let h = FieldLengthHistogram::parse("BlockSize\t10\n0\t5\n2\t1\n").expect("valid");
    assert_eq!(
        h,
        FieldLengthHistogram {
            block_size: 10,
            buckets: vec![5, 0, 1]
        }
    );
    assert!(FieldLengthHistogram::parse("Block 10\n").is_err());
    assert!(FieldLengthHistogram::parse("BlockSize\t10\n0 5\n").is_err());
    let missing = props(&[
        ("recordcount", "10"),
        ("fieldlengthdistribution", "histogram"),
        ("fieldlengthhistogram", "/nonexistent/hist.txt"),
    ]);
    assert!(matches!(missing, Err(PropertyError::Histogram { .. })));
}
