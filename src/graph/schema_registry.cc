// The schema registry shape inference and the node checks read
// (graph/onnx_importer.h): ONNX's schemas, ONNX Runtime's additions, and
// copies of a few with the inference they need.
#include <fmt/format.h>
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graph/domains.h"
#include "graph/onnx_importer.h"

namespace hetplan::internal {
namespace {

// Conv and pooling shape inference (convPoolShapeInference) trusted its
// inputs in ONNX 1.12: it indexed past its vectors when the weight's rank
// differs from the input's — e.g. a rank-2 input into a Conv with a
// [4,3,3,3] weight — and segfaulted, and it divided by the strides, so a
// stride of 0 killed the process with SIGFPE (both found by
// tests/fuzz/fuzz_onnx). The checks stay in front of the library's own.
onnx::InferenceFunction GuardedConvPool(onnx::InferenceFunction inner, int weight) {
  return [inner = std::move(inner), weight](onnx::InferenceContext& ctx) {
    for (const char* name : {"strides", "dilations", "kernel_shape"}) {
      if (const onnx::AttributeProto* a = ctx.getAttribute(name)) {
        for (int64_t v : a->ints()) {
          if (v < 1) fail_shape_inference("attribute '", name, "' has ", v, "; every value must be at least 1");
        }
      }
    }
    if (const onnx::AttributeProto* g = ctx.getAttribute("group"); g != nullptr && g->i() < 1) {
      fail_shape_inference("attribute 'group' is ", g->i(), "; it must be at least 1");
    }
    if (weight >= 0 && onnx::hasInputShape(ctx, 0) && onnx::hasInputShape(ctx, weight)) {
      const int x = ctx.getInputType(0)->tensor_type().shape().dim_size();
      const int w = ctx.getInputType(weight)->tensor_type().shape().dim_size();
      if (x != w) fail_shape_inference("the input has rank ", x, " but the weight has rank ", w, "; they must be equal");
    }
    inner(ctx);
  };
}

// Gemm's inner dimensions: ONNX 1.22 refuses a mismatch as "Dimension
// mismatch in unification between 5 and 4"; this says which of A and B, with
// the transpositions, in front of the library's own inference.
onnx::InferenceFunction GuardedGemm(onnx::InferenceFunction inner) {
  return [inner = std::move(inner)](onnx::InferenceContext& ctx) {
    auto dims = [&](size_t i) {
      std::vector<int64_t> d;
      if (!onnx::hasInputShape(ctx, i)) return d;
      for (const auto& dim : ctx.getInputType(i)->tensor_type().shape().dim()) {
        if (!dim.has_dim_value()) return std::vector<int64_t>{};
        d.push_back(dim.dim_value());
      }
      return d;
    };
    const std::vector<int64_t> a = dims(0), b = dims(1);
    if (a.size() == 2 && b.size() == 2) {
      const onnx::AttributeProto* ta = ctx.getAttribute("transA");
      const onnx::AttributeProto* tb = ctx.getAttribute("transB");
      const bool trans_a = ta != nullptr && ta->i() != 0, trans_b = tb != nullptr && tb->i() != 0;
      const int64_t a_inner = trans_a ? a[0] : a[1], k = trans_b ? b[1] : b[0];
      if (a_inner != k) {
        fail_shape_inference("A [", a[0], ",", a[1], "] and B [", b[0], ",", b[1], "] (transA ", trans_a ? 1 : 0,
                             ", transB ", trans_b ? 1 : 0, ") have different inner dimensions (", a_inner, " vs ",
                             k, "); the model is inconsistent: re-export it");
      }
    }
    inner(ctx);
  };
}

// Operators ONNX defines by a function body and gives no inference function
// of their own. For a body that depends on the node's types (GroupNormalization
// 18 and 21, among others) ONNX's shape inference leaves the outputs untyped,
// so every node after them fails; for a fixed body whose attribute references
// the node leaves at their defaults (MeanVarianceNormalization's axes), it
// fails on the unbound reference. Here the body is built for this node, given
// the schema's defaults, and inferred like a model-local function.
onnx::InferenceFunction FunctionBodyInference(const onnx::OpSchema* schema, const onnx::ISchemaRegistry* registry) {
  return [schema, registry](onnx::InferenceContext& ctx) {
    onnx::FunctionProto body;
    if (schema->HasContextDependentFunction()) {
      onnx::NodeProto node;
      node.set_op_type(schema->Name());
      node.set_domain(schema->domain());
      std::vector<onnx::TypeProto> types;
      for (size_t i = 0; i < ctx.getNumInputs(); ++i) {
        const onnx::TypeProto* t = ctx.getInputType(i);
        node.add_input(t != nullptr ? "in" + std::to_string(i) : "");
        types.push_back(t != nullptr ? *t : onnx::TypeProto());
      }
      for (size_t i = 0; i < ctx.getNumOutputs(); ++i) node.add_output("out" + std::to_string(i));
      for (const auto& [name, unused] : schema->attributes()) {
        if (const onnx::AttributeProto* a = ctx.getAttribute(name)) *node.add_attribute() = *a;
      }
      if (!schema->BuildContextDependentFunction(onnx::FunctionBodyBuildContextImpl(node, types), body)) {
        fail_shape_inference("ONNX could not build the function body of ", schema->Name(), "-",
                             schema->SinceVersion(), " for this node");
      }
    } else {
      body = *schema->GetFunction();
    }
    // ONNX binds a body's attribute references to the node's attributes, else
    // to the body's attribute_proto defaults, which the schemas' bodies lack.
    for (const auto& [name, attr] : schema->attributes()) {
      const bool listed = std::any_of(body.attribute_proto().begin(), body.attribute_proto().end(),
                                      [&](const onnx::AttributeProto& d) { return d.name() == name; });
      if (!listed && attr.default_value.type() != onnx::AttributeProto::UNDEFINED) {
        onnx::AttributeProto* d = body.add_attribute_proto();
        *d = attr.default_value;
        d->set_name(name);
      }
    }
    // With data propagation: the bodies reshape by Shape(X) (GroupNormalization does).
    const onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/1, /*data_prop=*/true);
    onnx::shape_inference::DataValueMap shape_data;
    onnx::shape_inference::InferShapeForFunctionNode(body, registry, ctx, options, {}, nullptr, &shape_data);
  };
}

// Shape inference runs against this registry: the standard schemas, ONNX
// Runtime's extra operators (graph/domains.h), and copies of the schemas
// above with the inference functions they need.
class GuardedSchemaRegistry final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& key, const int max_inclusive_version,
                                  const std::string& domain) const override {
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(key, max_inclusive_version, domain);
    // Operators ONNX Runtime adds (com.microsoft, graph/domains.h); their
    // convolutions reach the guarded Conv below through this registry.
    if (schema == nullptr) return internal::ExtraSchema(key, domain, *this);
    int weight = -1;  // index of the weight input
    if (key == "Conv" || key == "ConvInteger" || key == "ConvTranspose") weight = 1;
    if (key == "QLinearConv") weight = 3;
    const bool pool = key == "MaxPool" || key == "AveragePool" || key == "LpPool";
    const bool body = !schema->has_type_and_shape_inference_function() &&
                      (schema->HasContextDependentFunction() || schema->HasFunction());
    const bool gemm = key == "Gemm" && domain.empty();
    if (weight < 0 && !pool && !body && !gemm) return schema;
    std::lock_guard<std::mutex> lock(mu_);
    std::unique_ptr<onnx::OpSchema>& guarded = guarded_[schema];
    if (!guarded) {
      guarded = std::make_unique<onnx::OpSchema>(*schema);
      const onnx::InferenceFunction& own = schema->GetTypeAndShapeInferenceFunction();
      guarded->TypeAndShapeInferenceFunction(body   ? FunctionBodyInference(schema, this)
                                             : gemm ? GuardedGemm(own)
                                                    : GuardedConvPool(own, weight));
    }
    return guarded.get();
  }

 private:
  mutable std::mutex mu_;
  mutable std::map<const onnx::OpSchema*, std::unique_ptr<onnx::OpSchema>> guarded_;
};

}  // namespace

const onnx::ISchemaRegistry* SchemaRegistry() {
  static const GuardedSchemaRegistry registry;
  return &registry;
}

}  // namespace hetplan::internal
