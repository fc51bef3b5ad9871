#pragma once
// PieceWorkers decodes the pieces of a CoreSight plan (etm_segments.h) on `jobs` threads, in
// order and at most `jobs` + 1 pieces ahead of the one the stitching thread waits for, each piece
// by a fresh decoder: OpenCSD keeps its decode trees in process-wide lists, so they are made and
// destroyed on the stitching thread (in Take) and handed to the threads. What a piece's decode
// makes is a `Piece` (the events collected, or a consumer's part and what the joins read), which
// `decode` fills on a worker thread; pieces given back are reused, their memory warm. The decoder
// of the piece last taken and of the one before it are kept: a stretch over a piece that did not
// join (etm_stretch.h) decodes on with the held piece's decoder (Adopt) rather than decode that
// piece again.
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "decoders/etm/etm_decoder.h"
#include "decoders/etm/etm_segments.h"
#include "src/model/worker_threads.h"

namespace ptprof::etm {

template <typename Piece>
class PieceWorkers {
 public:
  using MakeDecoder = std::function<Result<std::unique_ptr<EtmDecoder>>()>;
  // Decodes piece `index` with `decoder` into `piece` (fresh from `make_piece`, or given back).
  using Decode = std::function<void(size_t index, EtmDecoder& decoder, Piece& piece)>;

  PieceWorkers(size_t pieces, unsigned jobs, MakeDecoder make_decoder,
               std::function<Piece()> make_piece, Decode decode)
      : jobs_(jobs), make_decoder_(std::move(make_decoder)), make_piece_(std::move(make_piece)),
        decode_(std::move(decode)), done_(pieces), decoders_(pieces) {}
  ~PieceWorkers() { Stop(); }

  // Makes the first decoders and starts the threads; an error when a decoder cannot be made, or
  // no thread can be started (a limit on threads or memory; with some, it goes on with those).
  Status Start() {
    if (auto st = TopUp(); !st) return st;
    const ThreadsStarted started = StartThreads(threads_, jobs_, [this](unsigned) { Work(); });
    if (started.count == 0 && jobs_ != 0)
      return Fail("cannot start a decoding thread: " + started.why);
    return {};
  }

  // Piece `i`, once decoded (waits for it); an error when a decoder cannot be made. Throws what
  // a piece's decode threw (out of memory) on its thread.
  Result<Piece> Take(size_t i) {
    if (auto st = TopUp(); !st) return tl::unexpected(st.error());
    std::unique_lock<std::mutex> lock(mutex_);
    wanted_ = i;
    wake_.notify_all();
    ready_.wait(lock, [&] { return done_[i].has_value() || failure_; });
    if (failure_) std::rethrow_exception(failure_);
    Piece piece = std::move(*done_[i]);
    done_[i].reset();
    if (i >= 2 && decoders_[i - 2]) used_.push_back(std::move(decoders_[i - 2]));
    return piece;
  }
  // The decoder that decoded piece `i` (the last taken or the one before it), as it stands at
  // the end of that piece; null when it was adopted or let go already.
  std::unique_ptr<EtmDecoder> Adopt(size_t i) {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(decoders_[i]);
  }
  // `piece`, emptied by the caller, for a piece to come.
  void GiveBack(Piece piece) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(piece));
  }
  // Tells the threads to start no more pieces; they finish the one they decode.
  void Halt() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
  }
  // Halts the threads and waits for them.
  void Stop() {
    Halt();
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
  }

 private:
  // Destroys the decoders used and makes fresh ones, enough for every piece the threads may
  // start before the next Take.
  Status TopUp() {
    std::vector<std::unique_ptr<EtmDecoder>> used;
    size_t have = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      used.swap(used_);
      have = fresh_.size();
    }
    used.clear();
    std::vector<std::unique_ptr<EtmDecoder>> made;
    while (have + made.size() < jobs_ + 1u) {
      auto decoder = make_decoder_();
      if (!decoder) return tl::unexpected(decoder.error());
      made.push_back(std::move(*decoder));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& decoder : made) fresh_.push_back(std::move(decoder));
    wake_.notify_all();
    return {};
  }

  void Work() {
    for (;;) {
      size_t i = 0;
      std::optional<Piece> piece;
      std::unique_ptr<EtmDecoder> decoder;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] {
          return stop_ || failure_ || next_ >= done_.size() ||
                 (next_ <= wanted_ + jobs_ && !fresh_.empty());
        });
        if (stop_ || failure_ || next_ >= done_.size()) return;
        i = next_++;
        decoder = std::move(fresh_.back());
        fresh_.pop_back();
        if (!free_.empty()) {
          piece.emplace(std::move(free_.back()));
          free_.pop_back();
        }
      }
      const std::exception_ptr failed = Caught([&] {
        if (!piece) piece.emplace(make_piece_());
        decode_(i, *decoder, *piece);
      });
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (failed) {
          if (!failure_) failure_ = failed;
        } else {
          done_[i] = std::move(*piece);
          decoders_[i] = std::move(decoder);
        }
      }
      ready_.notify_all();
      wake_.notify_all();
    }
  }

  const unsigned jobs_;
  MakeDecoder make_decoder_;
  std::function<Piece()> make_piece_;
  Decode decode_;
  std::mutex mutex_;
  std::condition_variable wake_, ready_;
  std::vector<std::optional<Piece>> done_;
  std::vector<std::unique_ptr<EtmDecoder>> decoders_;  // by piece, once decoded (see Adopt)
  std::vector<Piece> free_;
  std::vector<std::unique_ptr<EtmDecoder>> fresh_, used_;
  size_t next_ = 0, wanted_ = 0;
  bool stop_ = false;
  // What the first piece's decode that failed threw: Take throws it again, and no more pieces
  // are started.
  std::exception_ptr failure_;
  std::vector<std::thread> threads_;
};

}  // namespace ptprof::etm
