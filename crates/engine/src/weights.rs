//! The learned parameters ([LEARNED]): every matrix and norm of the transformer, laid out as
//! llama2.c lays them out, float32 or quantized (`quant`), whatever format they came from.

use crate::config::Config;
use crate::quant::{self, MatRef, Precision, Tensor};

/// The learned parameters, laid out exactly as in the file. Shapes follow llama2.c. The
/// matrices are float32 or quantized (`quant`); the norms are always float32.
#[derive(Debug, Clone)]
pub struct TransformerWeights {
    /// (vocab_size, dim)
    pub token_embedding: Tensor,
    /// (layer, dim) RMSNorm weights before attention
    pub rms_att: Vec<f32>,
    /// (layer, dim, dim) rows are output features: q = wq · x
    pub wq: Tensor,
    /// (layer, kv_dim, dim)
    pub wk: Tensor,
    /// (layer, kv_dim, dim)
    pub wv: Tensor,
    /// (layer, dim, dim)
    pub wo: Tensor,
    /// (layer, dim) RMSNorm weights before the MLP
    pub rms_ffn: Vec<f32>,
    /// (layer, hidden_dim, dim) gate projection
    pub w1: Tensor,
    /// (layer, dim, hidden_dim) down projection
    pub w2: Tensor,
    /// (layer, hidden_dim, dim) up projection
    pub w3: Tensor,
    /// (dim,)
    pub rms_final: Vec<f32>,
    /// (vocab_size, dim); `None` when the classifier shares `token_embedding`.
    pub wcls: Option<Tensor>,
    /// (layer, dim + 2·kv_dim): the biases added to Q, K and V before RoPE, each layer's
    /// [bq; bk; bv] in the order of the rows of [wq; wk; wv] (Qwen2's attention:
    /// `modeling_qwen2.py`, llama.cpp's `attn_q.bias`…). `None` for Llama, which has none.
    pub qkv_bias: Option<Vec<f32>>,
    /// (head_size / 2): Llama 3's RoPE frequency factors, pair j turning by
    /// pos · θ_j / factor_j (llama.cpp's `rope_freqs.weight`, which convert_hf_to_gguf.py
    /// computes from `rope_scaling.rope_type = llama3`). `None`: plain RoPE.
    pub rope_factors: Option<Vec<f32>>,
}

impl TransformerWeights {
    /// The classifier matrix (vocab_size, dim).
    pub fn classifier(&self) -> MatRef<'_> {
        self.wcls
            .as_ref()
            .unwrap_or(&self.token_embedding)
            .block(0, 1)
    }

    /// The precision of the matrices: `Ggml` when any is in a file's ggml blocks, else
    /// Wq's (a GGUF file may keep a matrix float32 beside quantized ones: [`Self::uniform`]).
    pub fn precision(&self) -> Precision {
        let mats = [
            &self.token_embedding,
            &self.wq,
            &self.w1,
            &self.w2,
            &self.w3,
        ];
        if mats
            .into_iter()
            .chain([&self.wk, &self.wv, &self.wo])
            .chain(self.wcls.as_ref())
            .any(|t| matches!(t, Tensor::Ggml(_)))
        {
            return Precision::Ggml;
        }
        self.wq.precision()
    }

    /// Whether every matrix is at one precision (and q8's in one group size), as the GPU's
    /// kernels take them.
    pub fn uniform(&self, c: &Config) -> bool {
        let group = |t: &Tensor| match t {
            Tensor::Quant(q) => q.group,
            _ => 0,
        };
        let first = &self.wq;
        self.matrices(c).iter().all(|(_, t, _)| {
            !matches!(t, Tensor::Ggml(_))
                && t.precision() == first.precision()
                && group(t) == group(first)
        })
    }

    /// Every matrix with its name and its number of blocks (layers), in file order.
    pub fn matrices(&self, c: &Config) -> Vec<(&'static str, &Tensor, usize)> {
        let l = c.n_layers;
        let mut t = vec![
            ("token_embedding", &self.token_embedding, 1),
            ("wq", &self.wq, l),
            ("wk", &self.wk, l),
            ("wv", &self.wv, l),
            ("wo", &self.wo, l),
            ("w1", &self.w1, l),
            ("w2", &self.w2, l),
            ("w3", &self.w3, l),
        ];
        if let Some(w) = &self.wcls {
            t.push(("wcls", w, 1));
        }
        t
    }

    /// The norms with their names, in file order.
    pub fn norms(&self) -> [(&'static str, &[f32]); 3] {
        [
            ("rms_att", &self.rms_att),
            ("rms_ffn", &self.rms_ffn),
            ("rms_final", &self.rms_final),
        ]
    }

    /// Bytes the weights take in memory (the matrices at their precision, the norms).
    pub fn bytes(&self, c: &Config) -> u64 {
        let m: u64 = self.matrices(c).iter().map(|(_, t, _)| t.bytes()).sum();
        let n: u64 = self.norms().iter().map(|(_, v)| 4 * v.len() as u64).sum();
        let b = self.qkv_bias.as_ref().map_or(0, |b| 4 * b.len() as u64);
        m + n + b
    }

    /// Every quantized matrix multiplied with `activations` on the CPU.
    pub fn set_activations(&mut self, activations: crate::quant::Activations) {
        let mats = [
            &mut self.token_embedding,
            &mut self.wq,
            &mut self.wk,
            &mut self.wv,
            &mut self.wo,
            &mut self.w1,
            &mut self.w2,
            &mut self.w3,
        ];
        for t in mats.into_iter().chain(self.wcls.as_mut()) {
            match t {
                Tensor::Quant(q) => q.activations = activations,
                Tensor::Ggml(g) => g.activations = activations,
                _ => {}
            }
        }
    }

    /// The same parameters with every matrix at `precision` (quantized from the float32
    /// values, or from the dequantized ones when already quantized; the norms unchanged).
    /// Q8's group follows llama2.c's `export.py` (64, halved until it divides `dim`).
    pub fn at(&self, c: &Config, precision: Precision) -> TransformerWeights {
        let g = quant::q8_group_for(c.dim);
        let l = c.n_layers;
        TransformerWeights {
            token_embedding: self.token_embedding.at(precision, 1, g),
            rms_att: self.rms_att.clone(),
            wq: self.wq.at(precision, l, g),
            wk: self.wk.at(precision, l, g),
            wv: self.wv.at(precision, l, g),
            wo: self.wo.at(precision, l, g),
            rms_ffn: self.rms_ffn.clone(),
            w1: self.w1.at(precision, l, g),
            w2: self.w2.at(precision, l, g),
            w3: self.w3.at(precision, l, g),
            rms_final: self.rms_final.clone(),
            wcls: self.wcls.as_ref().map(|w| w.at(precision, 1, g)),
            qkv_bias: self.qkv_bias.clone(),
            rope_factors: self.rope_factors.clone(),
        }
    }
}

/// A validated checkpoint: the blueprint and its parameters, as every file format reads it
/// (`formats`).
#[derive(Debug, Clone)]
pub struct Checkpoint {
    pub config: Config,
    pub weights: TransformerWeights,
}
