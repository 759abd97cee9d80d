import CoreMetrics

/// The store's own metrics.
enum StoreMetrics {
    /// Operations per committed transaction: how much group commit shares.
    static func batch(size: Int) {
        Recorder(label: "relay_store_commit_batch_size").record(size)
    }
}
