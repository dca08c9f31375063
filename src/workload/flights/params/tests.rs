use super::*;

fn sized() -> Params {
    Params {
        documents: Some(1_000_000),
        ..Params::default()
    }
}

#[test]
fn defaults_are_the_spec_defaults_and_valid_once_sized() {
    let p = Params::default();
    assert_eq!(p.workload, "flights/v1");
    assert_eq!(p.workers, 16);
    assert_eq!(p.percentages(), [60, 20, 10, 10, 0, 0]);
    assert_eq!(
        p.update_split,
        WriteSplit {
            one_by_flight_id: 80,
            one_by_id: 10,
            many_by_flight_id: 10
        }
    );
    assert_eq!(
        (p.hit_rate, p.find_limit, p.agg_window, p.insert_batch_size),
        (0.9, 5, 100, 10)
    );
    assert_eq!(
        (p.seed, p.dataset_seed, p.seed_batch_size, p.seed_workers),
        (1, 1, 1000, 8)
    );
    assert_eq!(p.duration, Duration::from_secs(600));
    assert_eq!(p.warmup, Duration::from_secs(60));
    assert_eq!((p.index_set.name(), p.explain_samples), ("plgm6", 3));
    assert_eq!(
        p.validate(),
        Err(ParamsError::DatasetSize("neither is set"))
    );
    assert_eq!(sized().validate(), Ok(()));
    assert_eq!(p.validate_traffic(), Ok(()));
}

#[test]
fn percentages_must_sum_to_exactly_100() {
    let p = Params {
        insert_percent: 5,
        ..sized()
    };
    let err = p.validate().unwrap_err();
    assert_eq!(err, ParamsError::PercentSum(95));
    assert!(err.to_string().contains("findPercent"), "{err}");
    let p = Params {
        aggregate_percent: 5,
        ..sized()
    };
    assert_eq!(p.validate(), Err(ParamsError::PercentSum(105)));
}

#[test]
fn splits_must_sum_to_100_and_are_named() {
    let p = Params {
        find_split: FindSplit {
            by_flight_id: 50,
            by_route: 40,
            by_status: 0,
        },
        ..sized()
    };
    let err = p.validate().unwrap_err();
    assert_eq!(
        err,
        ParamsError::SplitSum {
            knob: "findSplit",
            sum: 90
        }
    );
    assert!(err.to_string().starts_with("findSplit:"), "{err}");
    let mut p = sized();
    p.delete_split.one_by_id = 11;
    assert_eq!(
        p.validate(),
        Err(ParamsError::SplitSum {
            knob: "deleteSplit",
            sum: 101
        })
    );
    let mut p = sized();
    p.aggregate_split.route_summary = 0;
    assert_eq!(
        p.validate(),
        Err(ParamsError::SplitSum {
            knob: "aggregateSplit",
            sum: 50
        })
    );
}

#[test]
fn hit_rate_is_a_share() {
    for ok in [0.0, 0.5, 1.0] {
        assert_eq!(
            Params {
                hit_rate: ok,
                ..sized()
            }
            .validate(),
            Ok(())
        );
    }
    for bad in [-0.1, 1.01, 90.0, f64::NAN] {
        let err = Params {
            hit_rate: bad,
            ..sized()
        }
        .validate()
        .unwrap_err();
        assert!(matches!(err, ParamsError::HitRate(_)));
        assert!(err.to_string().starts_with("hitRate:"), "{err}");
    }
}

#[test]
fn insert_batch_size_is_1_to_1000() {
    assert_eq!(
        Params {
            insert_batch_size: 1,
            ..sized()
        }
        .validate(),
        Ok(())
    );
    assert_eq!(
        Params {
            insert_batch_size: 1000,
            ..sized()
        }
        .validate(),
        Ok(())
    );
    assert_eq!(
        Params {
            insert_batch_size: 0,
            ..sized()
        }
        .validate(),
        Err(ParamsError::Zero {
            knob: "insertBatchSize"
        })
    );
    let err = Params {
        insert_batch_size: 1001,
        ..sized()
    }
    .validate()
    .unwrap_err();
    assert_eq!(
        err,
        ParamsError::TooLarge {
            knob: "insertBatchSize",
            max: 1000,
            value: 1001
        }
    );
    assert_eq!(
        err.to_string(),
        "insertBatchSize: must be at most 1000, got 1001"
    );
}

#[test]
fn other_knobs_are_checked_by_name() {
    let cases: Vec<(Params, &str)> = vec![
        (
            Params {
                workload: "flights/v2".into(),
                ..sized()
            },
            "workload:",
        ),
        (
            Params {
                workers: 0,
                ..sized()
            },
            "workers:",
        ),
        (
            Params {
                find_limit: 0,
                ..sized()
            },
            "findLimit:",
        ),
        (
            Params {
                agg_window: 2_000_000,
                ..sized()
            },
            "aggWindow:",
        ),
        (
            Params {
                seed_batch_size: 0,
                ..sized()
            },
            "seedBatchSize:",
        ),
        (
            Params {
                seed_workers: 0,
                ..sized()
            },
            "seedWorkers:",
        ),
        (
            Params {
                data_bytes: Some(10),
                ..sized()
            },
            "documents / dataBytes:",
        ),
        (
            Params {
                documents: Some(0),
                ..sized()
            },
            "documents:",
        ),
        (
            Params {
                operations: Some(0),
                ..sized()
            },
            "operations:",
        ),
        (
            Params {
                duration: Duration::ZERO,
                ..sized()
            },
            "duration:",
        ),
        (
            Params {
                seed_batch_size: MAX_SEED_BATCH_SIZE + 1,
                ..sized()
            },
            "seedBatchSize:",
        ),
        (
            Params {
                documents: Some(1),
                transaction_percent: 10,
                insert_percent: 0,
                ..sized()
            },
            "documents:",
        ),
    ];
    for (p, prefix) in cases {
        let err = p.validate().unwrap_err().to_string();
        assert!(
            err.starts_with(prefix),
            "{err:?} should start with {prefix:?}"
        );
    }
    assert_eq!(
        Params {
            seed_batch_size: MAX_SEED_BATCH_SIZE,
            ..sized()
        }
        .validate(),
        Ok(())
    );
    assert_eq!(
        Params {
            documents: None,
            data_bytes: Some(2_876_000_000),
            ..sized()
        }
        .validate(),
        Ok(())
    );
    // An op-count bound run needs no duration.
    assert_eq!(
        Params {
            duration: Duration::ZERO,
            operations: Some(10),
            ..sized()
        }
        .validate(),
        Ok(())
    );
}
