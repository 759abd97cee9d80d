import Foundation
@testable import RelayStore

/// A folder of its own under the temporary directory, so tests running in parallel never share a file.
struct TemporaryFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("rhea-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ relative: String) -> String {
        url.appendingPathComponent(relative).path
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Runs `body` with a freshly opened store on its own file, then closes the store and removes the file.
func withTemporaryStore(_ body: (SQLiteStore) async throws -> Void) async throws {
    try await withTemporaryFolder { folder in
        let store = try await SQLiteStore.open(path: folder.path("relay.sqlite"))
        do {
            try await body(store)
        } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
    }
}

/// Runs `body` with a temporary folder that is removed afterwards, whether `body` throws or not.
func withTemporaryFolder(_ body: (TemporaryFolder) async throws -> Void) async throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    try await body(folder)
}

/// A fixed instant in whole seconds, so stored dates compare exactly.
func instant(_ offset: TimeInterval = 0) -> Date {
    Date(timeIntervalSince1970: 1_750_000_000 + offset)
}
