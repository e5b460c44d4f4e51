// Package delay is the broker's delayed delivery, in the shape of
// RocketMQ's ScheduleMessageService and TimerMessageStore: the delay-level
// scheduler (schedule.go: one goroutine per level reading its queue of
// SCHEDULE_TOPIC_XXXX and storing each message in its real topic once due)
// and the timer wheel (timer*.go: messages with TIMER_DELIVER_MS,
// TIMER_DELAY_SEC or TIMER_DELAY_MS parked in rmq_sys_wheel_timer and
// delivered at their slot, with a checkpoint so a clean restart delivers
// each exactly once). Service.DivertTimer is the send path's check that
// parks a timer message or refuses it. Recall (recall.go) cancels a timer
// message before its slot by a delete marker (TIMER_DEL_UNIQKEY), as
// RocketMQ 5's RECALL_MESSAGE; RecallHandle is the handle a timed send
// answers with.
//
// It registers no request codes itself: the broker routes RECALL_MESSAGE
// to Service.Recall. It is not the send
// path's DELAY-level redirect (the broker moves such a message to the
// schedule topic before storing it), nor lite pull, nor the store: messages are read and stored through Deps.Store, the scheduler's
// progress is kept in the broker's consumer offsets (Deps.Offsets), and the
// broker wires the store's arriving listener to Service.Wake.
//
// # Concurrency
//
// Start and Stop are called once each by the broker's lifecycle. The
// scheduler runs one goroutine per level and the timer one goroutine that
// owns all its state; they share nothing but the immutable configuration
// and the Store and Offsets, which must be safe for concurrent use. Wake,
// DivertTimer, RefuseTimerInBatch and TimerStats are safe for concurrent
// use at any time, and so are Recall and RecallHandle. The package never imports engine/broker.
package delay
