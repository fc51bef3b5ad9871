#pragma once
// PtxedSideband answers "what does ptxed print and decode when perf sideband is given?": a
// FlowObserver that passes everything to the PtxedPrinter and, after each event (as ptxed does),
// lets the PeventSession show and apply the sideband due by then; the image the session picks
// becomes the decoder's image.
#include "decoders/pt/flow_observer.h"
#include "decoders/pt/pevent_session.h"
#include "decoders/pt/ptxed_printer.h"

namespace ptprof::pt {

class PtxedSideband : public FlowObserver {
 public:
  PtxedSideband(PtxedPrinter& printer, PeventSession& session) : printer_(printer), session_(session) {}

  void OnEvent(const pt_event& event, uint64_t offset) override {
    printer_.OnEvent(event, offset);
    if (pt_image* image = session_.OnEvent(event)) next_image_ = image;
  }
  pt_image* ImageAfterEvent() override {
    pt_image* image = next_image_;
    next_image_ = nullptr;
    return image;
  }
  void OnBlock(const pt_block& block, const FlowStep& step) override { printer_.OnBlock(block, step); }
  void OnInsn(const pt_insn& insn, const FlowStep& step) override { printer_.OnInsn(insn, step); }
  void OnError(const FlowError& error) override { printer_.OnError(error); }
  void OnEndOfTrace() override { printer_.OnEndOfTrace(); }

 private:
  PtxedPrinter& printer_;
  PeventSession& session_;
  pt_image* next_image_ = nullptr;
};

}  // namespace ptprof::pt
