use std::time::Duration;

use super::board::Board;
use super::coordinator::Crew;
use super::member::Member;
use super::orders::{Order, Reply, Task};
use super::split::ClientSlice;

#[test]
fn orders_and_replies_round_trip_as_json() {
    let order = Order {
        seq: 7,
        target: 1,
        records: 1000,
        task: Task::Measure {
            start_at_ms: 42,
            step: None,
        },
        only: None,
    };
    let text = serde_json::to_string(&order).unwrap();
    assert_eq!(
        text,
        r#"{"seq":7,"target":1,"records":1000,"task":"measure","startAtMs":42}"#
    );
    assert_eq!(serde_json::from_str::<Order>(&text).unwrap(), order);
    let reply = Reply {
        seq: 7,
        outcome: Err("no server".into()),
    };
    let text = serde_json::to_string(&reply).unwrap();
    assert_eq!(serde_json::from_str::<Reply>(&text).unwrap(), reply);
}

#[tokio::test]
async fn a_coordinator_collects_every_reply_and_names_a_silent_process() {
    let dir = std::env::temp_dir().join(format!("mongobench-crew-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let board = Board::Dir(dir.clone());
    board.create().await.unwrap();
    let slices: Vec<_> = ClientSlice::new(0, 3).unwrap().all().collect();
    let (one, _) = Member::join(board.clone(), slices[1]).await.unwrap();
    let (two, _) = Member::join(board.clone(), slices[2]).await.unwrap();
    let crew = Crew::start(board.clone(), slices[0]).await.unwrap();
    let issued = crew.order(0, 10, |_| Task::Restore).await.unwrap();
    assert_eq!(one.next_order(0).await.unwrap().task, Task::Restore);
    one.reply(issued.seq, Ok(serde_json::json!(1))).await;
    let silent = crew.collect(&issued, Duration::from_millis(200)).await;
    assert_eq!(
        silent.unwrap_err(),
        "client process 2 of 3 did not reply within 0 s of this process finishing its \
         share (it stopped, or cannot reach the server or the board)"
    );
    two.reply(issued.seq, Ok(serde_json::json!(2))).await;
    assert_eq!(
        crew.collect(&issued, Duration::from_secs(1)).await.unwrap(),
        [serde_json::json!(1), serde_json::json!(2)]
    );
    let next = crew.order(0, 10, |_| Task::Restore).await.unwrap();
    two.reply(next.seq, Err("restoring: no server".into()))
        .await;
    one.reply(next.seq, Ok(serde_json::Value::Null)).await;
    assert_eq!(
        crew.collect(&next, Duration::from_secs(1))
            .await
            .unwrap_err(),
        "client process 2 of 3: restoring: no server"
    );
    // An order for one process waits for that one only.
    let one_only = crew
        .order_to(0, 10, |_| Task::Restore, Some(1))
        .await
        .unwrap();
    let order = one.next_order(next.seq).await.unwrap();
    assert!(order.is_for(1) && !order.is_for(2));
    one.reply(one_only.seq, Ok(serde_json::Value::Null)).await;
    assert_eq!(
        crew.collect(&one_only, Duration::from_secs(1))
            .await
            .unwrap(),
        [serde_json::Value::Null]
    );
    std::fs::remove_dir_all(dir).unwrap();
    // A board that is gone ends a member's wait.
    assert_eq!(two.next_order(0).await, None);
}
