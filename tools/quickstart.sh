#!/usr/bin/env bash
# From a fresh clone to a fine-tuned model on a small folder of faces, every step as documented
# (docs/your_own_data.md): sample faces -> im2rec -> train from scratch -> fine-tune -> validate
# -> export -> infer. Runs from the repository root with nothing beside it.
#
#   bash tools/quickstart.sh [WORK_DIR]        # default WORK_DIR: output/quickstart (replaced when an
#                                              # earlier quickstart made it; any other folder is refused)
#   QUICKSTART_SHORT=1 bash tools/quickstart.sh  # 32x32 faces, 3 epochs in all: the CI form (~1 min)
#
# The default form trains 112x112 crops, 10 + 5 epochs (the recipes' own lengths are 40 and 10):
# the pipeline as it runs on real crops. 200 images of 20 people teach little about faces the
# model has not seen: the first validations warn that the embeddings have collapsed, then the
# pairs of other people reach ~0.8 (docs/your_own_data.md). Step 7 compares two different people
# at the threshold validation chose.
#
# With your own faces, skip step 1 and point --root at your folder (aligned 112x112 crops + label.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"   # this checkout's paddle_pfc, installed or not
WORK=${1:-output/quickstart}
PY=${PYTHON:-python}
if [[ "${QUICKSTART_SHORT:-0}" == 1 ]]; then
    SIZE=32; SCRATCH_EPOCHS=2; FINETUNE_EPOCHS=1; PAIRS=40; FREEZE=3
else
    SIZE=112; SCRATCH_EPOCHS=10; FINETUNE_EPOCHS=5; PAIRS=100; FREEZE=10
fi
# WORK is replaced only when an earlier quickstart made it (its marker file), never another folder.
if [[ -e "$WORK" && -n "$(ls -A "$WORK" 2>/dev/null)" && ! -e "$WORK/.paddle_pfc_quickstart" ]]; then
    echo "quickstart: $WORK exists and was not made by this script: give another folder" >&2
    exit 2
fi
rm -rf "$WORK"
mkdir -p "$WORK"
touch "$WORK/.paddle_pfc_quickstart"
WORK=$(cd "$WORK" && pwd)
step() { echo; echo "== $*"; }

step "1. a folder of 20 people, 10 images each, and 'pairs.bin' of other people (your own: skip this)"
$PY tools/make_sample_faces.py --out "$WORK/my_faces" --identities 20 --images 10 --size $SIZE --pairs $PAIRS

step "2. convert to RecordIO"
$PY tools/im2rec.py --root "$WORK/my_faces" --output "$WORK/my_faces_rec" --workers 0

VAL="validation.sets=[{name: pairs, path: $WORK/my_faces/pairs.bin}]"
step "3. train from scratch (configs/train_small.yaml)"
$PY tools/train.py -c configs/train_small.yaml -o data.root="$WORK/my_faces_rec" -o data.num_classes=20 \
    -o model.input_size=$SIZE -o train.epochs=$SCRATCH_EPOCHS -o "$VAL" -o train.output_dir="$WORK/scratch"

step "4. fine-tune from it (configs/finetune_small.yaml; another output_dir than the source's)"
$PY tools/train.py -c configs/finetune_small.yaml --pretrained "$WORK/scratch/best" \
    -o data.root="$WORK/my_faces_rec" -o data.num_classes=20 -o model.input_size=$SIZE \
    -o train.epochs=$FINETUNE_EPOCHS -o train.freeze_backbone_steps=$FREEZE -o "$VAL" \
    -o train.output_dir="$WORK/finetune"

step "5. export the best fine-tuned model"
$PY tools/export.py --checkpoint "$WORK/finetune/best" --out "$WORK/model"

step "6. validate it on the pairs"
$PY tools/validate.py --model "$WORK/model" --bin "$WORK/my_faces/pairs.bin" --nrof-folds 5 --json "$WORK/validation.json"
THRESHOLD=$($PY -c "import json, sys; print(json.load(open(sys.argv[1]))['sets']['pairs']['cosine_threshold'])" \
    "$WORK/validation.json")

step "7. compare two faces of different people (the threshold: validate's 'cos threshold', $THRESHOLD)"
$PY tools/infer.py --model "$WORK/model" --threshold "$THRESHOLD" \
    --compare "$WORK/my_faces/person000/0000.jpg" "$WORK/my_faces/person001/0000.jpg"

echo
echo "quickstart done: the model is in $WORK/model"
